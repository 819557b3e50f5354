import { fencedWrite, readFenced } from '@holdfast/core';
import { lockKeys } from '@holdfast/core/internal';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

describe('fencing tokens', () => {
  const fx = useRedis();

  it('strictly increase across holders and clients, and are equal on re-entry', async () => {
    const a = await fx.client();
    const b = await fx.client();
    const tokens: number[] = [];
    for (let i = 0; i < 10; i++) {
      const client = i % 2 === 0 ? a : b;
      await client.lock('tok').withLock(async (lease) => {
        tokens.push(lease.token);
        await client.lock('tok').withLock((inner) => expect(inner.token).toBe(lease.token));
      });
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
  });

  it('keep increasing across lease expiry', async () => {
    const locks = await fx.client();
    const lock = locks.lock('tok-expiry');
    locks.on('lost', () => undefined);
    const first = await lock.acquire({ leaseMs: 100 });
    await delay(250);
    const second = await lock.acquire({ leaseMs: 100 });
    expect(second.token).toBeGreaterThan(first.token);
    await second.release();
  });

  it('leave at most one counter per hash slot behind, however many names are used', async () => {
    const locks = await fx.client({ prefix: `${fx.prefix}-many` });
    const redis = await fx.redis();
    const names = Array.from({ length: 300 }, (_, i) => `many-${i}`);
    for (const name of names) await (await locks.lock(name).acquire()).release();
    // The client's registration (`<prefix>:client:<id>`) is no lock key.
    const keys = (await redis.keys(`${fx.prefix}-many:*`)).filter((k) => !k.startsWith(`${fx.prefix}-many:client:`));
    const slots = new Set(names.map((n) => lockKeys(`${fx.prefix}-many`, n).slot));
    expect(keys.every((k) => k.endsWith(':fence'))).toBe(true);
    expect(keys.length).toBe(slots.size);
  });

  it('fencedWrite rejects a write carrying an older token', async () => {
    const redis = await fx.redis();
    const key = `${fx.prefix}:resource`;
    expect(await fencedWrite(redis, key, 5, 'from 5')).toBe(true);
    expect(await fencedWrite(redis, key, 4, 'stale')).toBe(false);
    expect(await fencedWrite(redis, key, 5, 'same token')).toBe(false);
    expect(await fencedWrite(redis, key, 6, 'from 6')).toBe(true);
    expect(await readFenced(redis, key)).toEqual({ token: 6, value: 'from 6' });
  });

  it('a paused holder whose lease expired cannot overwrite the next holder (fenced)', async () => {
    const a = await fx.client();
    const b = await fx.client();
    const redis = await fx.redis();
    a.on('lost', () => undefined);
    const key = `${fx.prefix}:fenced-doc`;
    const stale = await a.lock('fenced').acquire({ leaseMs: 100 });
    await delay(200); // "GC pause" past the lease
    await b.lock('fenced').withLock(async (lease) => {
      expect(await fencedWrite(redis, key, lease.token, 'b')).toBe(true);
    });
    expect(await fencedWrite(redis, key, stale.token, 'a-late')).toBe(false);
    expect((await readFenced(redis, key))?.value).toBe('b');
  });
});
