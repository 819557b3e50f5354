import 'reflect-metadata';
import { ClientClosedError, LockClient, RedisTimeoutError } from '@holdfast/core';
import { startRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import type { LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HoldfastModule } from '../src/index.js';
import { Exports, Invoices } from './apps.js';

/** The application's logger: keeps what it is given. */
class KeptLogger implements LoggerService {
  readonly errors: Array<{ message: unknown; stack: unknown; context: unknown }> = [];
  log(): void {}
  warn(): void {}
  error(message: unknown, stack?: unknown, context?: unknown): void {
    this.errors.push({ message, stack, context });
  }
}

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

it("logs the module's LockClient and Watchdog errors through Nest's Logger, never as process warnings", async () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    const logger = new KeptLogger();
    const holdfast = HoldfastModule.forRoot({
      client: () => new Redis(server.url),
      prefix: uniqueName('nest'),
      commandTimeoutMs: 200,
      retries: 0,
      watchdog: { timeoutMs: 10_000, renewIntervalMs: 100 },
    });
    const app = await Test.createTestingModule({ imports: [holdfast], providers: [Invoices, Exports] }).setLogger(logger).compile();
    await app.init();

    // A Watchdog listener that throws: the Watchdog's `error` event.
    app.get(Watchdog).once('renewed', () => {
      throw new Error('renewed listener failed');
    });
    await app.get(Exports).run();
    expect(logger.errors).toEqual([
      { message: 'Watchdog error: Error: renewed listener failed', stack: expect.stringContaining('renewed listener failed'), context: 'HoldfastModule' },
    ]);

    // Redis hung at shutdown: releasing the lock still held fails, the LockClient's `error` event.
    const invoices = app.get(Invoices);
    const holding = invoices.hold('1');
    // It rejects on shutdown, before its assertion: a handler at once keeps it from being reported unhandled.
    holding.catch(() => undefined);
    await waitFor(() => invoices.entered === 1);
    server.pause();
    const closing = app.close();
    await waitFor(() => app.get(LockClient).closed);
    invoices.release!();
    await expect(holding).rejects.toBeInstanceOf(ClientClosedError);
    // Once logged, Redis may answer again: the owned client then closes without waiting.
    await waitFor(() => logger.errors.length > 1);
    server.resume();
    await closing;
    expect(logger.errors.slice(1)).toContainEqual({
      message: `LockClient error: RedisTimeoutError: ${new RedisTimeoutError(200).message}`,
      stack: expect.any(String),
      context: 'HoldfastModule',
    });
    // process.emitWarning emits on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => (w as { code?: string }).code === 'HOLDFAST_UNHANDLED_ERROR')).toEqual([]);
  } finally {
    process.off('warning', onWarning);
  }
});
