import { LockLostError, LockTimeoutError, isHoldfastError } from '@holdfast/core';
import { QuorumError } from '@holdfast/redlock';
import { FaultProxy, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { expectCounts, lockKeysOn, timed, trackUnhandled, useServers } from './helpers.js';

/** Real processes killed, paused and slowed down; nothing mocked. */

const noKeysLeft = (servers: RedisServer[], prefix: string) =>
  waitFor(async () => (await Promise.all(servers.map((s) => lockKeysOn(s, prefix)))).every((k) => k.length === 0), {
    timeoutMs: 10_000,
    message: 'lock keys left behind',
  });

describe.each([
  [3, 1],
  [5, 2],
])('a minority (%i instances, %i killed) dies mid-run', (n, down) => {
  const fx = useServers(n);
  const unhandled = trackUnhandled();
  afterEach(() => expect(unhandled).toEqual([]));

  it('every acquisition still succeeds, and no call waits for the dead', async () => {
    // Long enough that the live instances always answer in time, however loaded the machine:
    // only the dead ones may be cut off by it.
    const instanceTimeoutMs = 1_000;
    const redlock = fx.redlock({ instanceTimeoutMs });
    const name = uniqueName('minority');
    const durations: number[] = [];
    let killing: Promise<unknown> | undefined;
    let killed = false;
    let afterKill = 0;
    for (let i = 0; i < 10 || afterKill < 30; i++) {
      // Not awaited: the servers die while calls are in flight.
      if (i === 10) {
        killing = Promise.all(fx.servers.slice(0, down).map((s) => s.kill())).then(() => (killed = true));
      }
      const acquired = await timed(() => redlock.lock(name).acquire({ leaseMs: 5_000, waitMs: 5_000 }));
      const released = await timed(() => acquired.value.release());
      durations.push(acquired.ms, released.ms);
      if (killed) afterKill++;
    }
    await killing;
    // A call to a dead instance never answers (ioredis queues it until a reconnect that cannot
    // happen): every call ended within the per-instance bound, plus a retry at most.
    expect(Math.max(...durations)).toBeLessThan(3 * instanceTimeoutMs);
  }, 60_000);
});

describe.each([
  [3, 2],
  [5, 3],
])('a majority (%i instances, %i killed) dies', (n, down) => {
  const fx = useServers(n);
  const unhandled = trackUnhandled();
  afterEach(() => expect(unhandled).toEqual([]));

  it('fails with a typed error within the wait and leaves no lock keys on the live nodes', async () => {
    // The live instances answer well within instanceTimeoutMs on any machine; the dead never do.
    const instanceTimeoutMs = 1_000;
    const retries = 2;
    const redlock = fx.redlock({ instanceTimeoutMs, retries, retryDelayMs: 50 });
    const lock = redlock.lock(uniqueName('majority'));
    const victims = fx.servers.slice(0, down);
    const live = fx.servers.slice(down);
    await Promise.all(victims.map((s) => s.kill()));
    try {
      const tried = await lock.tryAcquire().catch((e: unknown) => e);
      expect(tried).toBeInstanceOf(QuorumError);
      const error = tried as QuorumError;
      expect(isHoldfastError(error) && error.code).toBe('ERR_QUORUM');
      expect(error.reason).toBe('unreachable');
      expect(error.count('granted')).toBe(live.length);
      expect(error.count('error')).toBe(down);

      const waited = await timed(() => lock.acquire({ waitMs: 800 }).catch((e: unknown) => e));
      expect(waited.value).toBeInstanceOf(LockTimeoutError);
      expect((waited.value as LockTimeoutError).cause).toBeInstanceOf(QuorumError);
      // The wait, plus the round in flight when it ran out.
      expect(waited.ms).toBeLessThan(800 + 2 * instanceTimeoutMs);

      // Without waitMs: `retries` + 1 unreachable attempts, then the QuorumError itself.
      const gaveUp = await timed(() => lock.acquire().catch((e: unknown) => e));
      expect(gaveUp.value).toBeInstanceOf(QuorumError);
      // `retries` + 1 rounds of at most instanceTimeoutMs each, and the short backoffs between them.
      expect(gaveUp.ms).toBeLessThan((retries + 2) * instanceTimeoutMs + 1_000);

      await noKeysLeft(live, fx.prefix);
    } finally {
      await Promise.all(victims.map((s) => s.restart()));
    }
  }, 60_000);
});

describe('slow and hung instances', () => {
  const fx = useServers(3);
  const unhandled = trackUnhandled();
  const proxies: FaultProxy[] = [];
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    expect(unhandled).toEqual([]);
  });

  /** A connected client to `server` through a proxy adding `latencyMs` each way. */
  async function slowClient(server: RedisServer, latencyMs: number) {
    const proxy = await FaultProxy.start({ host: server.host, port: server.port });
    proxies.push(proxy);
    const client = server.client({ port: proxy.port });
    await client.ping();
    proxy.setLatency(latencyMs);
    return client;
  }

  it('a node slower than instanceTimeoutMs: acquired by the others at once; its late grant is cleaned up', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    // The fast instances answer well within instanceTimeoutMs on any machine; the slow one's
    // reply cannot be back before one round trip through its proxy (2 × 1.5 s).
    const slowRoundTripMs = 3_000;
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000 }, [a.client(), b.client(), await slowClient(c, 1_500)]);
    const lock = redlock.lock(uniqueName('slow'));
    const acquired = await timed(() => lock.acquire({ leaseMs: 20_000 }));
    expect(acquired.ms).toBeLessThan(slowRoundTripMs);
    // The slow instance grants the same owner later: it joins the hold.
    await waitFor(async () => (await fx.hashes(lock.keys.lock))[2] !== null, { timeoutMs: 10_000 });
    const released = await timed(() => acquired.value.release());
    expect(released.ms).toBeLessThan(slowRoundTripMs);
    await noKeysLeft([a, b, c], fx.prefix);
  });

  it('a late grant after a failed attempt is released at once, not left to its lease', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const holder = fx.redlock({}, [a.client(), b.client()]);
    const name = uniqueName('late-grant');
    const lease = await holder.lock(name).acquire({ leaseMs: 20_000 });
    // a and b answer (busy) well within instanceTimeoutMs on any machine; c's grant is late.
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000, leaseMs: 60_000 }, [
      a.client(),
      b.client(),
      await slowClient(c, 1_500),
    ]);
    const admin = c.client();
    const fenceKey = redlock.lock(name).keys.fence;
    const fenceBefore = Number(await admin.get(fenceKey));
    const started = performance.now();
    expect(await redlock.lock(name).tryAcquire()).toBeNull();
    // The slow instance did grant (its counter moved) and that grant is gone again, well within the lease.
    await waitFor(async () => Number(await admin.get(fenceKey)) > fenceBefore, { timeoutMs: 10_000 });
    await waitFor(async () => (await lockKeysOn(c, fx.prefix)).length === 0, { timeoutMs: 10_000 });
    expect(performance.now() - started).toBeLessThan(30_000);
    await lease.release();
  });

  it('replies delayed beyond the lease on a majority: not acquired, nothing left behind', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    // a answers well within instanceTimeoutMs on any machine; b and c answer after 2 × 2 s, long
    // after the 1.5 s lease.
    const clients = [a.client(), await slowClient(b, 2_000), await slowClient(c, 2_000)];
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000 }, clients);
    const acquired: unknown[] = [];
    redlock.on('acquired', (e) => acquired.push(e));
    const lock = redlock.lock(uniqueName('beyond'));
    const error = (await lock.tryAcquire({ leaseMs: 1_500 }).catch((e: unknown) => e)) as QuorumError;
    expect(error).toBeInstanceOf(QuorumError);
    expect(error.reason).toBe('unreachable');
    expect(error.outcomes.map((o) => o.status)).toEqual(['granted', 'error', 'error']);
    expect(error.outcomes.slice(1).every((o) => o.status === 'error' && o.timedOut)).toBe(true);
    await expect(lock.acquire({ leaseMs: 1_500, waitMs: 600 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(acquired).toEqual([]);
    await noKeysLeft([a, b, c], fx.prefix);
  }, 30_000);

  it('a majority that grants too late to leave usable validity: not acquired (too-slow), cleaned up', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const clients = [a.client(), await slowClient(b, 100), await slowClient(c, 100)];
    const redlock = fx.redlock({ instanceTimeoutMs: 900 }, clients);
    const lock = redlock.lock(uniqueName('too-slow'));
    const error = (await lock.tryAcquire({ leaseMs: 1_000 }).catch((e: unknown) => e)) as QuorumError;
    expect(error).toBeInstanceOf(QuorumError);
    expect(error.reason).toBe('too-slow');
    expect(error.count('granted')).toBeGreaterThanOrEqual(2);
    expect(error.validityMs).toBeLessThan(900);
    await noKeysLeft([a, b, c], fx.prefix);
  }, 30_000);

  it('QuorumError tells busy, refused and timed out instances apart', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const name = uniqueName('outcomes');
    // Busy: another owner holds it everywhere.
    const holder = fx.redlock();
    const held = await holder.lock(name).acquire({ leaseMs: 10_000 });
    const other = fx.redlock();
    expect(await other.lock(name).tryAcquire()).toBeNull();
    const timedOut = (await other
      .lock(name)
      .acquire({ waitMs: 200 })
      .catch((e: unknown) => e)) as LockTimeoutError;
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    const busy = timedOut.cause as QuorumError;
    expect(busy.reason).toBe('busy');
    expect(busy.outcomes.some((o) => o.status === 'busy' && o.pttl > 5_000)).toBe(true);
    await held.release();

    // Refused: B is down and its client fails at once. Timed out: C is hung.
    const clients = [a.client(), b.client({ enableOfflineQueue: false, maxRetriesPerRequest: 0 }), c.client()];
    await waitFor(() => clients.every((client) => client.status === 'ready'));
    // a answers well within instanceTimeoutMs on any machine; only the hung c runs out of it.
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000 }, clients);
    await b.kill();
    await waitFor(() => clients[1]!.status !== 'ready');
    c.pause();
    try {
      const error = (await redlock
        .lock(name)
        .tryAcquire()
        .catch((e: unknown) => e)) as QuorumError;
      expect(error).toBeInstanceOf(QuorumError);
      expect(error.reason).toBe('unreachable');
      expect(error.outcomes[0]).toMatchObject({ instance: 0, status: 'granted' });
      expect(error.outcomes[1]).toMatchObject({ instance: 1, status: 'error', timedOut: false });
      expect(error.outcomes[2]).toMatchObject({ instance: 2, status: 'error', timedOut: true });
      expect(error.message).toMatch(/needs 2 of 3 instances/);
    } finally {
      c.resume();
      await b.restart();
    }
    // The hung instance granted once resumed; that late grant is undone as well.
    await noKeysLeft([a, b, c], fx.prefix);
  }, 30_000);

  it('a hung minority holds up neither acquire nor release', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const instanceTimeoutMs = 1_000;
    const redlock = fx.redlock({ instanceTimeoutMs }, [a.client(), b.client(), c.client()]);
    const lock = redlock.lock(uniqueName('hung'));
    c.pause();
    try {
      // c answers nothing while paused, so both returning at all shows neither waited for it;
      // the bound (a retry at most) catches a wait for anything else.
      const acquired = await timed(() => lock.acquire({ leaseMs: 10_000 }));
      const released = await timed(() => acquired.value.release());
      expect(acquired.ms).toBeLessThan(3 * instanceTimeoutMs);
      expect(released.ms).toBeLessThan(3 * instanceTimeoutMs);
    } finally {
      c.resume();
    }
    await noKeysLeft([a, b, c], fx.prefix);
  });

  it('extend needs a quorum: QuorumError without one, LockLostError once a majority lost the key', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    // Live instances answer well within it on any machine; only the paused ones run out of it.
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000 });
    const lost: string[] = [];
    redlock.on('lost', (e) => lost.push(e.reason));
    const lock = redlock.lock(uniqueName('extend'));
    const lease = await lock.acquire({ leaseMs: 5_000 });
    b.pause();
    c.pause();
    try {
      const error = (await lease.extend(10_000).catch((e: unknown) => e)) as QuorumError;
      expect(error).toBeInstanceOf(QuorumError);
      expect(error.operation).toBe('extend');
      expect(error.reason).toBe('unreachable');
      expect(lease.isHeld).toBe(true);
    } finally {
      b.resume();
      c.resume();
    }
    await lease.extend(10_000);
    expect(lease.isHeld).toBe(true);

    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    const admin = [a.client(), b.client()];
    await Promise.all(admin.map((r) => r.del(lock.keys.lock)));
    const error = await lease.extend().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).reason).toBe('deleted');
    expect(lease.signal.aborted).toBe(true);
    expect(lost).toEqual(['deleted']);
    await c.client().del(lock.keys.lock);
  });
});
