import { LockClient, InvalidArgumentError, UnsupportedClientError } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import RedisMock from 'ioredis-mock';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * ioredis-mock (an in-memory emulator many teams unit-test with) is refused at construction: its
 * fengari Lua differs from Redis where holdfast's scripts depend on it, so a lock over it would
 * not exclude (the first acquire or re-entry reads the lock's own key as foreign data). The
 * README ("In your own tests") says what to run instead: a real redis-server.
 */
const opened: { disconnect(): void }[] = [];
afterEach(() => {
  for (const client of opened.splice(0)) client.disconnect();
});
const mock = () => {
  const client = new RedisMock();
  opened.push(client);
  return client;
};

function expectRefused(make: () => unknown): void {
  let error: unknown;
  try {
    make();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(UnsupportedClientError);
  expect(error).toBeInstanceOf(InvalidArgumentError);
  const refused = error as UnsupportedClientError;
  expect(refused.code).toBe('ERR_UNSUPPORTED_CLIENT');
  expect(refused.client).toBe('ioredis-mock');
  expect(refused.lacks).toEqual([
    "Redis's replies in Lua (status replies as `{ok = …}` tables, `redis.pcall` errors as `{err = …}` tables)",
    '`redis.error_reply`',
    '`SPUBLISH`',
  ]);
  expect(refused.message).toMatch(/^ioredis-mock is not supported: it lacks .*Locks over it would not exclude\. In unit tests, run a real redis-server/);
}

describe('ioredis-mock', () => {
  it('is refused at construction, naming what it lacks: its client, a duplicate, its Cluster, under Redlock', () => {
    expectRefused(() => new LockClient(mock()));
    expectRefused(() => new LockClient(mock().duplicate()));
    const cluster = new RedisMock.Cluster(['redis://127.0.0.1:7000']);
    opened.push(cluster);
    expectRefused(() => new LockClient(cluster));
    expectRefused(() => new Redlock([mock(), mock(), mock()]));
  });

  // The refusal stands on these gaps: a version of ioredis-mock without them fails here, and the
  // refusal is to be measured again.
  it('lacks what the refusal names (8.13.1): status replies and pcall errors as tables, error_reply, SPUBLISH', async () => {
    const redis = mock();
    const kind = "local r = %s; if type(r) == 'table' then return 'table' end return type(r)";
    expect(await redis.eval(kind.replace('%s', "redis.call('SET', KEYS[1], 'v')"), 1, 'k')).toBe('string');
    expect(await redis.eval(kind.replace('%s', "redis.pcall('NOSUCHCOMMAND')"), 0)).toBe('userdata');
    await expect(redis.eval("return redis.error_reply('HFERR x')", 0)).rejects.toThrow(/error_reply/);
    await expect(redis.eval("return redis.call('SPUBLISH', 'c', 'm')", 0)).rejects.toThrow();
  });
});
