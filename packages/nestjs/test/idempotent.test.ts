import 'reflect-metadata';
import { sharedRedis, uniqueName, waitFor } from '@holdfast/test-utils';
import { Body, Controller, Header, Module, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { HoldfastModule, Idempotent } from '../src/index.js';

/** What the handlers did: how often each ran, and the gate the slow one waits at. */
const state = { runs: 0, started: false, open: () => undefined as void, gate: Promise.resolve() };

@Controller('orders')
class OrdersController {
  @Post()
  @Header('X-Order-Version', '2')
  @Idempotent({ ttlMs: 60_000 })
  async create(@Body() body: { item: string }) {
    state.runs++;
    state.started = true;
    await state.gate;
    return { id: `order-${state.runs}`, item: body.item };
  }

  @Post('waiting')
  @Idempotent({ waitMs: 30_000, name: 'waiting' })
  async createWaiting(@Body() body: { item: string }) {
    state.runs++;
    state.started = true;
    await state.gate;
    return { id: `order-${state.runs}`, item: body.item };
  }

  @Post('strict')
  @Idempotent({ required: true, name: 'strict' })
  strict() {
    return { ok: true };
  }
}

const apps: INestApplication[] = [];
afterEach(async () => {
  state.open();
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function serve(): Promise<string> {
  const { url } = await sharedRedis();
  @Module({ imports: [HoldfastModule.forRoot({ client: () => new Redis(url), prefix: uniqueName('nest-idem') })], controllers: [OrdersController] })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  return `${await app.getUrl()}/orders`;
}

async function post(url: string, body: unknown, key?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, replayed: response.headers.get('idempotent-replayed'), version: response.headers.get('x-order-version') };
}

function reset(): void {
  state.runs = 0;
  state.started = false;
  state.gate = new Promise<void>((resolve) => (state.open = resolve));
}

describe('@Idempotent over real HTTP (Express)', () => {
  it('concurrent duplicates get 409 while the first runs; later ones replay its status, body and headers; another body is 422', async () => {
    const url = await serve();
    reset();
    const first = post(url, { item: 'book' }, 'key-1');
    await waitFor(() => state.started);
    const duplicates = await Promise.all([1, 2, 3].map(() => post(url, { item: 'book' }, 'key-1')));
    for (const d of duplicates) expect(d.status).toBe(409);
    state.open();
    expect(await first).toEqual({ status: 201, body: { id: 'order-1', item: 'book' }, replayed: null, version: '2' });
    expect(await post(url, { item: 'book' }, 'key-1')).toEqual({ status: 201, body: { id: 'order-1', item: 'book' }, replayed: 'true', version: '2' });
    expect((await post(url, { item: 'pen' }, 'key-1')).status).toBe(422);
    expect(state.runs).toBe(1);
    // No header: the handler runs as usual, every time.
    expect((await post(url, { item: 'pen' })).body).toEqual({ id: 'order-2', item: 'pen' });
    expect((await post(url, { item: 'pen' })).body).toEqual({ id: 'order-3', item: 'pen' });
  });

  it('with waitMs, concurrent duplicates wait and all get the first response', async () => {
    const url = await serve();
    reset();
    const first = post(`${url}/waiting`, { item: 'lamp' }, 'key-2');
    await waitFor(() => state.started);
    const duplicates = [1, 2, 3, 4].map(() => post(`${url}/waiting`, { item: 'lamp' }, 'key-2'));
    state.open();
    const all = await Promise.all([first, ...duplicates]);
    expect(state.runs).toBe(1);
    for (const response of all) expect(response).toMatchObject({ status: 201, body: { id: 'order-1', item: 'lamp' } });
    expect(all.map((r) => r.replayed)).toEqual([null, 'true', 'true', 'true', 'true']);
  });

  it('required: a request without the header is 400', async () => {
    const url = await serve();
    expect((await post(`${url}/strict`, {})).status).toBe(400);
    expect((await post(`${url}/strict`, {}, 'k')).status).toBe(201);
  });
});
