import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FaultProxy,
  activeHandleCount,
  activeResources,
  sleep,
  startRedis,
  uniqueName,
  waitFor,
} from '../src/index.js';
import type { RedisServer } from '../src/index.js';
import { claimPort, PORTS_DIR } from '../src/ports.js';

let server: RedisServer;
let direct: Redis;
const proxies: FaultProxy[] = [];
const clients: Redis[] = [];

beforeAll(async () => {
  server = await startRedis();
  direct = server.client();
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

afterAll(async () => {
  await server.stop();
});

async function proxy(): Promise<FaultProxy> {
  const started = await FaultProxy.start(server);
  proxies.push(started);
  return started;
}

function clientVia(target: FaultProxy, options: RedisOptions = {}): Redis {
  const client = new Redis(target.port, target.host, options);
  client.on('error', () => {});
  clients.push(client);
  return client;
}

/**
 * The runner owns short-lived timers (e.g. batching task updates), so a single
 * sample can include one that expires mid-test and hide a real leak; the
 * lowest of several samples is the true idle baseline.
 */
async function quietHandleCount(): Promise<number> {
  let lowest = activeHandleCount();
  for (let i = 0; i < 10; i++) {
    await sleep(20);
    lowest = Math.min(lowest, activeHandleCount());
  }
  return lowest;
}

describe('FaultProxy', () => {
  it('forwards traffic transparently', async () => {
    const p = await proxy();
    expect(p.url).toBe(`redis://127.0.0.1:${p.port}`);
    const client = clientVia(p);
    const key = uniqueName('pass');
    await client.set(key, 'through');
    expect(await direct.get(key)).toBe('through');
    expect(await client.get(key)).toBe('through');
    expect(p.connections).toBe(1);
  });

  it('setLatency() delays both directions', async () => {
    const p = await proxy();
    const client = clientVia(p);
    await client.ping();
    p.setLatency(1_000);
    const started = performance.now();
    await client.ping();
    // 1 s out + 1 s back. The proxy schedules on the same monotonic
    // clock, so this lower bound holds by construction however slow CI is.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_995);
    p.setLatency(0);
    const fast = performance.now();
    await client.ping();
    // Only proves the 2 s of injected delay is gone: a loopback round trip
    // is far below half of it even on a loaded machine.
    expect(performance.now() - fast).toBeLessThan(1_000);
  });

  it('setLatency() keeps byte order within a connection', async () => {
    const p = await proxy();
    const client = clientVia(p);
    await client.ping();
    p.setLatency(15);
    const key = uniqueName('order');
    const pipeline = client.pipeline();
    for (let i = 0; i < 200; i++) pipeline.rpush(key, String(i));
    const results = await pipeline.exec();
    expect(results?.map(([, value]) => value)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(await direct.lrange(key, 0, -1)).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
  });

  it('blackhole() swallows traffic without closing the connection', async () => {
    const p = await proxy();
    const client = clientVia(p, { commandTimeout: 300 });
    let closed = false;
    client.on('close', () => {
      closed = true;
    });
    await client.ping();
    const key = uniqueName('hole');
    p.blackhole(true);
    await expect(client.set(key, 'x')).rejects.toThrow(/timed out/i);
    expect(await direct.exists(key)).toBe(0);
    expect(p.connections).toBe(1);
    expect(closed).toBe(false);
    p.blackhole(false);
    // The old client is now off by one reply (ioredis keeps timed-out
    // commands queued), so prove recovery with a new connection.
    expect(await clientVia(p).ping()).toBe('PONG');
  });

  it('resetAll() drops connections and the client reconnects', async () => {
    const p = await proxy();
    const client = clientVia(p);
    await client.ping();
    let reconnects = 0;
    client.on('reconnecting', () => reconnects++);
    p.resetAll();
    await waitFor(() => reconnects > 0, { message: 'client never noticed the reset' });
    expect(await client.ping()).toBe('PONG');
    await waitFor(() => p.connections === 1);
  });

  it('dropNextReply() loses a reply after the server applied the command', async () => {
    const p = await proxy();
    const client = clientVia(p);
    await client.ping();
    const key = uniqueName('drop');
    const dropped = p.dropNextReply();
    // ioredis resends the unanswered INCR on reconnect: one call, two effects.
    const value = await client.incr(key);
    await dropped;
    expect(value).toBe(2);
    expect(await direct.get(key)).toBe('2');
  });

  it('refuse() closes new connections immediately', async () => {
    const p = await proxy();
    p.refuse(true);
    const refused = clientVia(p, { lazyConnect: true, retryStrategy: () => null });
    await expect(refused.connect()).rejects.toThrow();
    expect(p.connections).toBe(0);
    p.refuse(false);
    expect(await clientVia(p).ping()).toBe('PONG');
    expect(p.connections).toBe(1);
  });

  it('listens on a port reserved outside the ephemeral range until close()', async () => {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const p = await FaultProxy.start(server);
    expect(p.port < low! || p.port > high!).toBe(true);
    expect(claimPort(p.port)).toBe(false);
    await p.close();
    // Released: no reservation of this process is left (another worker may have claimed it since).
    const file = path.join(PORTS_DIR, String(p.port));
    expect(existsSync(file) ? readFileSync(file, 'utf8') : 'released').not.toBe(String(process.pid));
  });

  it('close() leaves no handle behind, even with delayed data in flight', async () => {
    const baseline = await quietHandleCount();
    const p = await FaultProxy.start(server);
    const client = new Redis(p.port, p.host, { retryStrategy: () => null, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    await client.ping();
    p.setLatency(5000);
    const idle = activeHandleCount();
    const pending = client.ping().catch((error: unknown) => error);
    // The proxy's latency timer shows up as an extra handle once the PING is
    // queued inside it, which is exactly the state close() must clean up.
    await waitFor(() => activeHandleCount() > idle, { message: 'PING never reached the proxy' });
    await p.close();
    expect(p.connections).toBe(0);
    expect(await pending).toBeInstanceOf(Error);
    // With retryStrategy null the client ends by itself. Calling disconnect()
    // on an already-closed ioredis client would arm its own 2 s
    // disconnectTimeout timer and show up here as a false leak.
    await waitFor(() => client.status === 'end');
    await waitFor(() => activeHandleCount() <= baseline, {
      timeoutMs: 1000,
      message: () => `baseline ${baseline}, handles left: ${activeResources().join(', ')}`,
    });
  });
});
