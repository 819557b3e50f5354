import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activeHandleCount,
  activeResources,
  commandStats,
  commandStatsDelta,
  sleep,
  startRedis,
  uniqueName,
  waitFor,
} from '../src/index.js';
import type { RedisServer } from '../src/index.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server.stop();
});

describe('commandStats', () => {
  it('counts calls per lowercase command name', async () => {
    const redis = server.client();
    const key = uniqueName('stats');
    const sha = (await redis.script('LOAD', 'return 1')) as string;
    const before = await commandStats(redis);
    await redis.hincrby(key, 'field', 1);
    await redis.hincrby(key, 'field', 1);
    await redis.publish(uniqueName('chan'), 'hello');
    await redis.evalsha(sha, 0);
    const after = await commandStats(redis);

    expect(after.hincrby).toBe(2);
    const delta = commandStatsDelta(before, after);
    expect(delta).toMatchObject({ hincrby: 2, publish: 1, evalsha: 1 });
    // The INFO call that took `before` is the only other traffic.
    expect(Object.keys(delta).sort()).toEqual(['evalsha', 'hincrby', 'info', 'publish']);
    // Subcommands keep Redis' pipe spelling.
    expect(after['script|load']).toBe(1);
  });

  it('commandStatsDelta drops unchanged commands and treats new ones as from zero', () => {
    expect(commandStatsDelta({ get: 3, set: 1 }, { get: 3, set: 4, del: 2 })).toEqual({ set: 3, del: 2 });
  });
});

describe('waitFor', () => {
  it('resolves once an async predicate turns true', async () => {
    let calls = 0;
    await waitFor(async () => ++calls >= 3, { intervalMs: 5 });
    expect(calls).toBe(3);
  });

  it('rejects with the given message after the timeout', async () => {
    const started = Date.now();
    await expect(waitFor(() => false, { timeoutMs: 100, message: 'never happened' })).rejects.toThrow(
      'never happened',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('includes the last predicate error in the timeout message', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('still down');
        },
        { timeoutMs: 50 },
      ),
    ).rejects.toThrow(/still down/);
  });
});

describe('small helpers', () => {
  it('sleep waits at least the given time', async () => {
    const started = Date.now();
    await sleep(30);
    // Timers may fire slightly early by Date.now() (cached loop clock).
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
  });

  it('uniqueName is prefixed and unique', () => {
    const names = new Set(Array.from({ length: 1000 }, () => uniqueName('lock')));
    expect(names.size).toBe(1000);
    for (const name of names) expect(name).toMatch(/^lock:[0-9a-f]{16}$/);
    expect(uniqueName()).toMatch(/^test:/);
  });

  it('activeHandleCount sees a ref-ed timer and ignores an unref-ed one', () => {
    const before = activeHandleCount();
    const ref = setTimeout(() => {}, 10_000);
    const unref = setTimeout(() => {}, 10_000).unref();
    try {
      expect(activeHandleCount()).toBe(before + 1);
      expect(activeResources()).toContain('Timeout');
    } finally {
      clearTimeout(ref);
      clearTimeout(unref);
    }
    expect(activeHandleCount()).toBe(before);
  });
});
