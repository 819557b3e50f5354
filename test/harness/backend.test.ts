import { afterAll, describe, expect, it } from 'vitest';
import { describeBackend, detectBackend, sharedRedis, startRedis, uniqueName, waitFor } from '../src/index.js';
import { redisFromEnv } from '../src/remote-redis.js';

afterAll(async () => {
  await (await sharedRedis()).stop();
});

describe('detectBackend', () => {
  it('answers and caches the answer', async () => {
    // (The runtime probe is capped at ~2 s even when a docker socket hangs; no test times it:
    // a loaded machine may take longer to start the probe itself.)
    const backend = await detectBackend();
    expect(['env', 'container', 'spawn']).toContain(backend);
    if (process.env.REDIS_URL) expect(backend).toBe('env');
    else expect(backend).not.toBe('env');
    // Cached: later calls get the very same answer, without probing again.
    expect(detectBackend()).toBe(detectBackend());
    expect(await detectBackend()).toBe(backend);
  });
});

describe('describeBackend', () => {
  it('prints one line naming the backend and the server', async () => {
    const line = await describeBackend();
    expect(line).not.toContain('\n');
    expect(line).toMatch(/^redis backend: (env|container|spawn) \(/);
    if ((await detectBackend()) === 'spawn') {
      expect(line).toMatch(/^redis backend: spawn \(redis-server \d+\.\d+\.\d+ at 127\.0\.0\.1:\d+\)$/);
    }
  });
});

describe('sharedRedis', () => {
  it('is memoised and usable', async () => {
    const [a, b] = await Promise.all([sharedRedis(), sharedRedis()]);
    expect(a).toBe(b);
    expect(await a.client().ping()).toBe('PONG');
    expect(a.backend).toBe(await detectBackend());
    if (a.backend === 'spawn') expect(a.pid).toBeTypeOf('number');
  });

  it('hands out a fresh server after the shared one was stopped', async () => {
    const first = await sharedRedis();
    await first.stop();
    const second = await sharedRedis();
    expect(second).not.toBe(first);
    const key = uniqueName('shared');
    await second.client().set(key, '1');
    expect(await second.client().get(key)).toBe('1');
  });
});

describe('REDIS_URL backend wrapper', () => {
  // Pointed at a private spawned server: the system Redis on :6379 is never touched.
  it('connects through the URL and refuses process-level faults', async () => {
    const real = await startRedis();
    const url = `redis://${real.host}:${real.port}/3`;
    const wrapped = redisFromEnv(url);
    try {
      expect(wrapped.backend).toBe('env');
      expect(wrapped.pid).toBeUndefined();
      expect(wrapped.port).toBe(real.port);
      const client = wrapped.client();
      await client.set('k', 'in-db-3');
      // The URL's database index is honoured by clients and by flush().
      const db0 = real.client();
      await db0.set('k', 'in-db-0');
      await wrapped.flush();
      expect(await client.exists('k')).toBe(0);
      expect(await db0.get('k')).toBe('in-db-0');

      await expect(wrapped.kill()).rejects.toThrow(/not supported on REDIS_URL backend/);
      await expect(wrapped.restart()).rejects.toThrow(/not supported on REDIS_URL backend/);
      expect(() => wrapped.pause()).toThrow(/not supported on REDIS_URL backend/);
      expect(() => wrapped.resume()).toThrow(/not supported on REDIS_URL backend/);

      await wrapped.stop();
      await waitFor(() => client.status === 'end', { message: 'stop() left a client connected' });
    } finally {
      await real.stop();
    }
  });
});
