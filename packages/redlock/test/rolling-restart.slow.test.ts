import { QuorumError, type Redlock, type RedlockLease } from '@holdfast/redlock';
import { uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import { afterEach, describe, expect, it } from 'vitest';
import { delay, expectCounts, lockKeysOn, trackUnhandled, useServers } from './helpers.js';

/**
 * Instances restarted without persistence (they come back empty), one at a
 * time, while a lease is held: a majority keeps renewing it, and each
 * restarted instance gets the hold back (and its fencing counter raised)
 * before the next one goes down.
 */

type Fixture = ReturnType<typeof useServers>;

/** Reads one key on one server through a short-lived client. */
async function onServer<T>(server: RedisServer, read: (redis: ReturnType<RedisServer['client']>) => Promise<T>): Promise<T> {
  const admin = server.client({ maxRetriesPerRequest: 1 });
  try {
    return await read(admin);
  } finally {
    admin.disconnect();
  }
}

/**
 * Acquires and releases a few times first, so a counter that started over
 * would show (tokens 1, 2…). Each release has reached every instance before
 * the next acquisition, so that one is granted everywhere.
 */
async function warmUp(fx: Fixture, redlock: Redlock, name: string): Promise<void> {
  const lock = redlock.lock(name);
  for (let i = 0; i < 3; i++) {
    await (await lock.acquire({ leaseMs: 10_000 })).release();
    await expectCounts(fx, lock.keys.lock, fx.servers.map(() => null));
  }
}

/**
 * A second Redlock trying to take the lock over and over, until stopped:
 * every lease it gets is recorded (and given back). A QuorumError (too few
 * instances answered in time) is a failed attempt, as is `null`.
 */
function rivalLoop(rival: Redlock, name: string) {
  const won: number[] = [];
  let attempts = 0;
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      const lease = await rival
        .lock(name)
        .tryAcquire({ leaseMs: 5_000 })
        .catch((error: unknown) => {
          if (error instanceof QuorumError) return null;
          throw error;
        });
      attempts++;
      if (lease) {
        won.push(lease.token);
        await lease.release().catch(() => undefined);
      }
      await delay(25);
    }
  })();
  return {
    won,
    get attempts() {
      return attempts;
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/**
 * Restarts every server in turn, each only once the hold (same owner, same
 * count) is back on the one restarted before and its fencing counter is at
 * least the lease's token. `renew` runs while waiting for that (a no-op
 * where a watchdog renews): a call sent while the client was still
 * reconnecting may fail, and the next one puts the hold back.
 */
async function rollingRestart(fx: Fixture, lease: RedlockLease, key: string, fenceKey: string, renew: () => Promise<void>) {
  await expectCounts(fx, key, fx.servers.map(() => '1'));
  const held = (await fx.hashes(key))[0];
  expect(held).not.toBeNull();
  for (const [k, server] of fx.servers.entries()) {
    const runId = () => onServer(server, async (r) => /run_id:(\w+)/.exec(await r.info('server'))?.[1]);
    const before = await runId();
    await server.restart();
    // A new process, started without persistence: it came back empty.
    expect(await runId()).not.toEqual(before);
    let last: unknown;
    await waitFor(
      async () => {
        last = (await fx.hashes(key))[k];
        if (JSON.stringify(last) === JSON.stringify(held)) return true;
        await renew();
        return false;
      },
      {
        timeoutMs: 20_000,
        intervalMs: 100,
        message: () => `instance ${k}: ${JSON.stringify(last)}, expected ${JSON.stringify(held)}`,
      },
    );
    expect(Number(await onServer(server, (r) => r.get(fenceKey)))).toBeGreaterThanOrEqual(lease.token);
    expect(await onServer(server, (r) => r.pttl(key))).toBeGreaterThan(0);
    expect(lease.isHeld).toBe(true);
    expect(lease.signal.aborted).toBe(false);
  }
}

/** After the lease is released: the next lease, on another Redlock, draws a larger token. */
async function nextTokenIsLarger(rival: Redlock, name: string, lease: RedlockLease): Promise<void> {
  const next = await rival.lock(name).acquire({ leaseMs: 10_000, waitMs: 20_000 });
  expect(next.token).toBeGreaterThan(lease.token);
  await next.release();
}

describe.each([3, 5])('rolling restart of %i instances without persistence', (n) => {
  const fx = useServers(n);
  const unhandled = trackUnhandled();
  afterEach(() => expect(unhandled).toEqual([]));

  it('a watchdog-held lease survives a restart of each instance in turn; no rival ever gets the lock', async () => {
    // Generous bounds: live instances answer within them on any machine, and
    // renewals every 200 ms leave many chances before the 6 s lease runs out.
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000 });
    const watchdog = new Watchdog(redlock, { timeoutMs: 6_000, renewIntervalMs: 200 });
    const rival = fx.redlock({ instanceTimeoutMs: 1_000 });
    const lost: unknown[] = [];
    redlock.on('lost', (e) => lost.push(e));
    watchdog.on('lost', (e) => lost.push(e));
    const name = uniqueName('rolling');
    const lock = redlock.lock(name);
    let rivals: ReturnType<typeof rivalLoop> | undefined;
    try {
      await warmUp(fx, redlock, name);
      const lease = await lock.acquire();
      expect(lease.token).toBeGreaterThan(3);
      await expectCounts(fx, lock.keys.lock, fx.servers.map(() => '1'));
      // From here on, the lock is never free.
      rivals = rivalLoop(rival, name);
      const aborted: unknown[] = [];
      lease.signal.addEventListener('abort', () => aborted.push(lease.signal.reason));

      await rollingRestart(fx, lease, lock.keys.lock, lock.keys.fence, async () => undefined);

      // Every instance holds it again: a renewal reaches all of them.
      await expectCounts(fx, lock.keys.lock, fx.servers.map(() => '1'));
      await rivals.stop();
      expect(rivals.attempts).toBeGreaterThan(0);
      expect(rivals.won).toEqual([]);
      expect(lease.isHeld).toBe(true);
      expect(aborted).toEqual([]);
      expect(lost).toEqual([]);

      await lease.release();
      await waitFor(async () => (await Promise.all(fx.servers.map((s) => lockKeysOn(s, fx.prefix)))).every((k) => k.length === 0), {
        timeoutMs: 10_000,
        message: 'lock keys left behind',
      });
      await nextTokenIsLarger(rival, name, lease);
    } finally {
      await rivals?.stop();
      await watchdog.stop();
    }
  }, 120_000);
});

describe('re-creation never overwrites another owner, and extend() re-creates too', () => {
  const fx = useServers(3);
  const unhandled = trackUnhandled();
  afterEach(() => expect(unhandled).toEqual([]));

  /**
   * Another owner's hold on the last server only, written by the same
   * scripts (a Redlock over that server alone): our hold there is removed
   * (forceRelease) and the other owner takes the free key. Retried, since a
   * renewal can put ours back in between.
   */
  async function takeOverLast(name: string): Promise<{ lease: RedlockLease; alone: Redlock }> {
    const last = fx.servers[fx.servers.length - 1]!;
    const alone = fx.redlock({ instanceTimeoutMs: 1_000 }, [last.client()]);
    let lease: RedlockLease | null = null;
    await waitFor(
      async () => {
        await alone.lock(name).forceRelease();
        lease = await alone.lock(name).tryAcquire({ leaseMs: 60_000 });
        return lease !== null;
      },
      { timeoutMs: 20_000, message: 'the other owner never got the last instance' },
    );
    return { lease: lease!, alone };
  }

  it('an instance answering "taken" to renewals keeps the other owner; ours comes back once that key is gone', async () => {
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000 });
    const watchdog = new Watchdog(redlock, { timeoutMs: 6_000, renewIntervalMs: 200 });
    let ticks = 0;
    watchdog.on('renewed', () => ticks++);
    const name = uniqueName('taken');
    const lock = redlock.lock(name);
    try {
      const lease = await lock.acquire();
      await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
      const ours = (await fx.hashes(lock.keys.lock))[0];
      const other = await takeOverLast(name);
      const theirs = (await fx.hashes(lock.keys.lock))[2];
      expect(theirs).not.toEqual(ours);

      // Several renewals (each sent to every instance) after the other owner took it.
      const from = ticks;
      await waitFor(() => ticks >= from + 5, { timeoutMs: 20_000, message: 'no renewals' });
      expect((await fx.hashes(lock.keys.lock))[2]).toEqual(theirs);
      expect(other.lease.isHeld).toBe(true);
      expect(lease.isHeld).toBe(true);

      // Their lock ends there: the key is gone, and ours is put back.
      await other.lease.release();
      await waitFor(async () => JSON.stringify((await fx.hashes(lock.keys.lock))[2]) === JSON.stringify(ours), {
        timeoutMs: 20_000,
        message: 'not re-created on the last instance',
      });
      expect(lease.isHeld).toBe(true);
      await lease.release();
    } finally {
      await watchdog.stop();
    }
  }, 60_000);

  it('lease.extend() re-creates the hold on restarted instances, never over another owner', async () => {
    const redlock = fx.redlock({ instanceTimeoutMs: 1_000 });
    const rival = fx.redlock({ instanceTimeoutMs: 1_000 });
    const name = uniqueName('extend');
    const lock = redlock.lock(name);
    let rivals: ReturnType<typeof rivalLoop> | undefined;
    try {
      await warmUp(fx, redlock, name);
      const lease = await lock.acquire({ leaseMs: 30_000 });
      expect(lease.token).toBeGreaterThan(3);
      await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
      rivals = rivalLoop(rival, name);

      await rollingRestart(fx, lease, lock.keys.lock, lock.keys.fence, () => lease.extend(30_000));
      await rivals.stop();
      expect(rivals.attempts).toBeGreaterThan(0);
      expect(rivals.won).toEqual([]);

      // Another owner on the last instance: extending (a majority still holds it) leaves it there.
      const ours = (await fx.hashes(lock.keys.lock))[0];
      const other = await takeOverLast(name);
      const theirs = (await fx.hashes(lock.keys.lock))[2];
      for (let i = 0; i < 5; i++) await lease.extend(30_000);
      expect((await fx.hashes(lock.keys.lock))[2]).toEqual(theirs);
      expect(theirs).not.toEqual(ours);
      await other.lease.release();
      await lease.extend(30_000);
      await waitFor(async () => JSON.stringify((await fx.hashes(lock.keys.lock))[2]) === JSON.stringify(ours), {
        timeoutMs: 20_000,
        message: 'not re-created on the last instance',
      });

      await lease.release();
      await nextTokenIsLarger(rival, name, lease);
    } finally {
      await rivals?.stop();
    }
  }, 120_000);
});
