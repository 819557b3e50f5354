import 'reflect-metadata';
import { LockClient } from '@holdfast/core';
import { sharedRedis, uniqueName } from '@holdfast/test-utils';
import { Controller, Get, Inject, Module, Param, type INestApplication } from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HoldfastModule, LockTimeoutFilter, WithLock } from '../src/index.js';

/** LockTimeoutFilter over a real HTTP server (Express), with the route decorators on either side of @WithLock. */
@Controller('invoices')
class InvoicesController {
  constructor(@Inject(LockClient) readonly locks: LockClient) {}

  @Get(':id/pay')
  @WithLock((id: string) => `invoice:${id}`, { waitMs: 200 })
  pay(@Param('id') id: string) {
    return { paid: id };
  }

  @WithLock((id: string) => `invoice:${id}`, { waitMs: 200 })
  @Get(':id/refund')
  refund(@Param('id') id: string) {
    return { refunded: id };
  }

  @Get('fail')
  fail() {
    throw new Error('not a lock timeout');
  }
}

const apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function serve(prefix: string, filter: 'global' | 'provider', status?: 409 | 423): Promise<{ app: INestApplication; base: string }> {
  const { url } = await sharedRedis();
  @Module({
    imports: [HoldfastModule.forRoot({ client: () => new Redis(url), prefix })],
    controllers: [InvoicesController],
    providers: filter === 'provider' ? [{ provide: APP_FILTER, useClass: LockTimeoutFilter }] : [],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
  apps.push(app);
  if (filter === 'global') app.useGlobalFilters(new LockTimeoutFilter({ status }, app.getHttpAdapter()));
  await app.listen(0, '127.0.0.1');
  return { app, base: `${await app.getUrl()}/invoices` };
}

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

describe('LockTimeoutFilter', () => {
  it('answers a lock wait that ran out with 423 (useGlobalFilters); routes work with @Get above or below @WithLock', async () => {
    const prefix = uniqueName('nest-http');
    const { app, base } = await serve(prefix, 'global', 423);
    expect(await get(`${base}/1/pay`)).toEqual({ status: 200, body: { paid: '1' } });
    expect(await get(`${base}/1/refund`)).toEqual({ status: 200, body: { refunded: '1' } });
    const lease = await app.get(LockClient).lock('invoice:1').acquire();
    const busy = { statusCode: 423, error: 'Locked', message: 'The resource is busy: try again later' };
    expect(await get(`${base}/1/pay`)).toEqual({ status: 423, body: busy });
    expect(await get(`${base}/1/refund`)).toEqual({ status: 423, body: busy });
    await lease.release();
    // Other errors keep Nest's own answer.
    expect((await get(`${base}/fail`)).status).toBe(500);
  });

  it('answers 409 by default, as an APP_FILTER provider', async () => {
    const { app, base } = await serve(uniqueName('nest-http'), 'provider');
    const lease = await app.get(LockClient).lock('invoice:2').acquire();
    expect(await get(`${base}/2/pay`)).toEqual({
      status: 409,
      body: { statusCode: 409, error: 'Conflict', message: 'The resource is busy: try again later' },
    });
    await lease.release();
  });

  it('takes 409 or 423 only', () => {
    expect(() => new LockTimeoutFilter({ status: 500 as 409 })).toThrow('Expected `status` to be one of 409, 423, got `500`');
  });
});
