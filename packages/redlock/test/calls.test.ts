import { scripts } from '@holdfast/core/internal';
import { waitFor } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { useServers } from './helpers.js';

type Admin = ReturnType<ReturnType<typeof useServers>['clients']>[number];

/** The KEYS and ARGV of every call of `sha` one server ran, oldest first (SLOWLOG with a 0 µs threshold records every command). */
async function callsOf(admin: Admin, sha: string): Promise<string[][]> {
  const entries = (await admin.slowlog('GET', 1000)) as [number, number, number, string[]][];
  return entries
    .map(([, , , args]) => args)
    .filter((args) => args[0]?.toLowerCase() === 'evalsha' && args[1] === sha)
    .map((args) => args.slice(3))
    .reverse();
}

describe('release calls', () => {
  const fx = useServers(3);
  let admins: Admin[] = [];
  afterEach(async () => {
    await Promise.all(admins.map((admin) => admin.config('SET', 'slowlog-log-slower-than', '10000')));
    for (const admin of admins) admin.disconnect();
    admins = [];
  });

  it('the last release of a hold take.lua granted is release-taken.lua (the lock key and the owner); an inner one is release.lua with 5 arguments', async () => {
    admins = fx.clients();
    await Promise.all(admins.map((admin) => admin.config('SET', 'slowlog-log-slower-than', '0')));
    // Loaded beforehand, so every release is an EVALSHA (a first call may otherwise be an
    // EVAL of the source, which SLOWLOG shows cut at 128 bytes).
    await Promise.all(admins.flatMap((admin) => [admin.script('LOAD', scripts.release.source), admin.script('LOAD', scripts.releaseTaken.source)]));
    await Promise.all(admins.map((admin) => admin.slowlog('RESET')));
    const lock = fx.redlock().lock('release-args');
    await lock.withLock(async () => {
      await lock.withLock(() => undefined);
      expect(await lock.isLocked()).toBe(true);
    });
    expect(await lock.isLocked()).toBe(false);
    // The release resolved on a majority; the last instance may still be running its call.
    // (A grant that came too late is dropped whole in the background: release.lua, 4 arguments.)
    const calls = async () =>
      Promise.all(admins.map(async (admin) => ({ taken: await callsOf(admin, scripts.releaseTaken.sha), release: await callsOf(admin, scripts.release.sha) })));
    const lastRelease = (c: { taken: string[][]; release: string[][] }) => c.taken.length > 0 || c.release.some((call) => call.length === 8);
    await waitFor(async () => (await calls()).every(lastRelease));
    const seen = await calls();
    expect(seen.filter((c) => c.taken.length > 0).length).toBeGreaterThanOrEqual(2);
    for (const c of seen) for (const call of c.taken) expect(call).toEqual([lock.keys.lock, expect.any(String)]);
    // Every other release.lua call dropped one hold: the inner one, where the re-entry was
    // granted (a majority at least), or a re-entry granted too late to count.
    const inner = seen.map((c) => c.release.filter((call) => call.length !== 8));
    expect(inner.filter((list) => list.length > 0).length).toBeGreaterThanOrEqual(2);
    // 4 keys, then the owner, a request id, the channel, the claim and '0' (one hold).
    for (const list of inner) for (const call of list) expect([call.length, call[8]]).toEqual([9, '0']);
  });
});

describe('a script cache flushed on every instance', () => {
  const fx = useServers(3);

  it('take, release-taken, acquire and release are sent whole again, and the cycle goes on with its token', async () => {
    const admins = fx.clients();
    const flushScripts = () => Promise.all(admins.map((admin) => admin.script('FLUSH')));
    try {
      const redlock = fx.redlock();
      const lock = redlock.lock('flushed');
      const first = await lock.acquire();
      await first.release();
      // Between two cycles (take.lua, release-taken.lua) and inside a withLock (acquire.lua, release.lua of the re-entry).
      await flushScripts();
      const second = await lock.acquire();
      expect(second.token).toBeGreaterThan(first.token);
      await flushScripts();
      await second.release();
      expect(await lock.isLocked()).toBe(false);
      await lock.withLock(async (outer) => {
        await flushScripts();
        const inner = await lock.acquire();
        expect(inner.token).toBe(outer.token);
        await flushScripts();
        await inner.release();
        expect(await lock.isLocked()).toBe(true);
      });
      expect(await lock.isLocked()).toBe(false);
      expect((await fx.hashes(lock.keys.lock)).every((hash) => hash === null)).toBe(true);
    } finally {
      for (const admin of admins) admin.disconnect();
    }
  });
});

describe('a take.lua that leaves the answer to acquire.lua', () => {
  const fx = useServers(3);

  it('a holder whose key has no TTL: each instance asks acquire.lua, which answers busy; nothing is taken', async () => {
    const admins = fx.clients();
    try {
      const lock = fx.redlock().lock('no-ttl');
      // Another owner's string lock (as take.lua writes it) left without a TTL on every instance.
      await Promise.all(admins.map((admin) => admin.set(lock.keys.lock, 'other@req|5')));
      expect(await lock.tryAcquire()).toBeNull();
      const hashes = await fx.hashes(lock.keys.lock);
      expect(hashes.every((hash) => hash !== null && Object.keys(hash).includes('other'))).toBe(true);
    } finally {
      for (const admin of admins) admin.disconnect();
    }
  });
});
