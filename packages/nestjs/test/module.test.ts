import 'reflect-metadata';
import { ClientClosedError, InvalidArgumentError, LockClient, LockTimeoutError } from '@holdfast/core';
import { activeHandleCount, activeResources, sharedRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import { Module, type DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HoldfastModule, LockLease, WithLock } from '../src/index.js';
import { Exports, Invoices, LockConfig, Reports, ReportsModule } from './apps.js';

/** HoldfastModule in apps built with Test.createTestingModule, against a real Redis. */
let server: RedisServer;
const open: TestingModule[] = [];
const clients: Redis[] = [];

beforeAll(async () => {
  server = await sharedRedis();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
});
afterAll(() => {
  for (const client of clients) client.disconnect();
});

function redis(): Redis {
  const client = new Redis(server.url);
  clients.push(client);
  return client;
}

async function boot(holdfast: DynamicModule, providers: unknown[] = [Invoices], imports: unknown[] = []): Promise<TestingModule> {
  const app = await Test.createTestingModule({ imports: [holdfast, ...(imports as [])], providers: providers as [] }).compile();
  open.push(app);
  await app.init();
  return app;
}

/** Another process's view: a client of its own on the same prefix. */
function rival(prefix: string): LockClient {
  return new LockClient(redis(), { prefix });
}

/** Sockets of earlier tests may still be closing: the count must come down to at most the baseline. */
const settlesTo = (baseline: number) =>
  waitFor(() => activeHandleCount() <= baseline, {
    timeoutMs: 3_000,
    message: () => `still active: ${activeResources().join(', ')} (baseline ${baseline})`,
  });

describe('HoldfastModule.forRoot', () => {
  it('locks the name under the prefix, re-enters, hands the lease to @LockLease, is global', async () => {
    const prefix = uniqueName('nest');
    const app = await boot(HoldfastModule.forRoot({ client: () => new Redis(server.url), prefix }), [Invoices], [ReportsModule]);
    const invoices = app.get(Invoices);

    const paid = await invoices.pay('42');
    expect(paid).toMatchObject({ name: 'invoice:42', holdCount: 1 });
    const [outer, inner] = await invoices.payTwice('42');
    expect(outer).toMatchObject({ name: 'invoice:42', holdCount: 1 });
    expect(inner).toMatchObject({ name: 'invoice:42', holdCount: 2, token: outer.token });
    expect(outer.token).toBeGreaterThan(paid.token);
    const [fixed, label] = await invoices.nightly(undefined, 'label');
    expect(fixed).toMatchObject({ name: 'nightly', holdCount: 1 });
    expect(label).toBe('label');

    // A provider of a module that never imported HoldfastModule gets the same LockClient.
    const reports = app.get(Reports);
    expect(reports.locks).toBe(app.get(LockClient));
    expect(await reports.build()).toBeGreaterThan(0);
    expect(() => app.get(Watchdog)).toThrow();

    // While a call holds invoice:7, that name is taken under the prefix, and only that name.
    const other = rival(prefix);
    const holding = invoices.hold('7');
    await waitFor(() => invoices.entered === 1);
    expect(await other.lock('invoice:7').tryAcquire()).toBeNull();
    await expect(invoices.pay('7')).rejects.toBeInstanceOf(LockTimeoutError);
    const unrelated = await other.lock('invoice:8').tryAcquire();
    expect(unrelated).not.toBeNull();
    await unrelated!.release();
    invoices.release!();
    expect(await holding).toEqual({ aborted: false });
    const after = await other.lock('invoice:7').tryAcquire();
    expect(after).not.toBeNull();
    await after!.release();
    await other.close();
  });

  it('closes a client it made through the factory on shutdown; later calls reject with ClientClosedError; no handle left', async () => {
    const baseline = activeHandleCount();
    let made: Redis | undefined;
    const app = await boot(HoldfastModule.forRoot({ client: () => (made = new Redis(server.url)), prefix: uniqueName('nest') }));
    const invoices = app.get(Invoices);
    const locks = app.get(LockClient);
    await invoices.pay('1');
    await app.close();
    open.length = 0;
    expect(locks.closed).toBe(true);
    expect(made!.status).toBe('end');
    await expect(invoices.pay('1')).rejects.toBeInstanceOf(ClientClosedError);
    await settlesTo(baseline);
  });

  it('never closes a client given as an instance', async () => {
    const mine = redis();
    const app = await boot(HoldfastModule.forRoot({ client: mine, prefix: uniqueName('nest') }));
    await app.get(Invoices).pay('1');
    await app.close();
    open.length = 0;
    expect(app.get(LockClient).closed).toBe(true);
    expect(await mine.ping()).toBe('PONG');
  });

  it('closes a node-redis client its async factory connected', async () => {
    const baseline = activeHandleCount();
    let made: ReturnType<typeof createClient> | undefined;
    const app = await boot(
      HoldfastModule.forRoot({ client: () => (made = createClient({ url: server.url })).connect(), prefix: uniqueName('nest') }),
    );
    expect(await app.get(Invoices).pay('5')).toMatchObject({ holdCount: 1 });
    await app.close();
    open.length = 0;
    expect(made!.isOpen).toBe(false);
    await settlesTo(baseline);
  });

  it('on shutdown, a section still running rejects with ClientClosedError and its lock is free at once', async () => {
    const prefix = uniqueName('nest');
    const app = await boot(HoldfastModule.forRoot({ client: () => new Redis(server.url), prefix, leaseMs: 60_000 }));
    const invoices = app.get(Invoices);
    const holding = invoices.hold('9');
    // It rejects on shutdown, before its assertion: a handler at once keeps it from being reported unhandled.
    holding.catch(() => undefined);
    await waitFor(() => invoices.entered === 1);
    const closing = app.close();
    open.length = 0;
    // The section learns through its lease's signal; it ends when it returns.
    await waitFor(() => app.get(LockClient).closed);
    invoices.release!();
    await expect(holding).rejects.toBeInstanceOf(ClientClosedError);
    await closing;
    // Freed by the shutdown (releaseOnShutdown), not left to its 60 s lease.
    const other = rival(prefix);
    const lease = await other.lock('invoice:9').tryAcquire();
    expect(lease).not.toBeNull();
    await lease!.release();
    await other.close();
  });

  it('with releaseOnShutdown: false the lock stays until its lease runs out', async () => {
    const prefix = uniqueName('nest');
    const app = await boot(
      HoldfastModule.forRoot({ client: () => new Redis(server.url), prefix, leaseMs: 60_000, releaseOnShutdown: false }),
    );
    const invoices = app.get(Invoices);
    const holding = invoices.hold('3');
    // It rejects on shutdown, before its assertion: a handler at once keeps it from being reported unhandled.
    holding.catch(() => undefined);
    await waitFor(() => invoices.entered === 1);
    const closing = app.close();
    open.length = 0;
    await waitFor(() => app.get(LockClient).closed);
    invoices.release!();
    await expect(holding).rejects.toBeInstanceOf(ClientClosedError);
    await closing;
    const other = rival(prefix);
    expect(await other.lock('invoice:3').tryAcquire()).toBeNull();
    await other.lock('invoice:3').forceRelease();
    await other.close();
  });

  it('a factory client is closed again when the module fails to start', async () => {
    let made: Redis | undefined;
    const compile = Test.createTestingModule({
      imports: [HoldfastModule.forRoot({ client: () => (made = new Redis(server.url)), prefix: 'no{braces}' })],
    }).compile();
    await expect(compile).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(made!.status).toBe('end');
  });
});

describe('HoldfastModule.forRootAsync', () => {
  it('takes its options from injected providers; with watchdog, Watchdog is injectable and renews; shutdown stops it', async () => {
    const prefix = uniqueName('nest');
    @Module({ providers: [{ provide: LockConfig, useValue: { url: server.url, prefix } }], exports: [LockConfig] })
    class ConfigModule {}
    const app = await boot(
      HoldfastModule.forRootAsync({
        imports: [ConfigModule],
        inject: [LockConfig],
        useFactory: (config: LockConfig) => ({ client: () => new Redis(config.url), prefix: config.prefix }),
        // A long lease renewed often: a busy machine loses no lease, and a renewal comes soon.
        watchdog: { timeoutMs: 10_000, renewIntervalMs: 100 },
      }),
      [Exports],
    );
    const dog = app.get(Watchdog);
    expect(app.get(LockClient).options.prefix).toBe(prefix);
    // The method sees a renewal of its own lease, which the watchdog gave its timeoutMs.
    expect(await app.get(Exports).run()).toEqual({ leaseMs: 10_000, held: true });
    await app.close();
    open.length = 0;
    expect(dog.stopped).toBe(true);
  });
});

describe('@WithLock and @LockLease misuse', () => {
  it('reject bad names, options and placements with InvalidArgumentError', async () => {
    expect(() => WithLock('')).toThrow(InvalidArgumentError);
    expect(() => WithLock('x', { waitMs: -1 })).toThrow('Expected `waitMs` to be a positive integer, got `-1`');
    expect(() => {
      class TwoLeases {
        @WithLock('x')
        async run(@LockLease() a?: unknown, @LockLease() b?: unknown) {
          return [a, b];
        }
      }
      return TwoLeases;
    }).toThrow('Expected one `@LockLease()` parameter on `TwoLeases.run`, got parameters 0 and 1');
    class Plain {
      @WithLock('x')
      async run() {
        return 1;
      }
    }
    await expect(new Plain().run()).rejects.toThrow(
      'Expected `Plain.run` to be called on an instance Nest created, in an application importing HoldfastModule',
    );
    const app = await boot(HoldfastModule.forRoot({ client: redis(), prefix: uniqueName('nest') }));
    class Named {
      @WithLock((n: number) => n as unknown as string)
      async run(n: number) {
        return n;
      }
    }
    const named = Object.assign(new Named(), await app.resolve(Invoices));
    await expect(named.run(1)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
