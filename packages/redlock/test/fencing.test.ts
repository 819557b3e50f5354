import type { Redis } from 'ioredis';
import { Redlock } from '@holdfast/redlock';
import { FaultProxy, lockFields, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { useServers } from './helpers.js';

/**
 * Fencing across changing majorities. Each instance keeps its own counter,
 * so the counters of two majorities drift apart; only the raise step keeps
 * tokens increasing from one holder to the next.
 */
describe('fencing with a changing majority (seeded counters)', () => {
  const fx = useServers(3);
  const proxies: FaultProxy[] = [];
  const extra: Redis[] = [];
  afterEach(async () => {
    for (const r of extra.splice(0)) r.disconnect();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  /** A client to `server` through a proxy that drops every byte: the instance looks hung to this client only. */
  async function cutOff(server: RedisServer): Promise<Redis> {
    const proxy = await FaultProxy.start({ host: server.host, port: server.port });
    proxy.blackhole(true);
    proxies.push(proxy);
    const client = server.client({ port: proxy.port, lazyConnect: false });
    extra.push(client);
    return client;
  }

  it('the next majority draws a larger token even when its own counters are smaller', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const name = uniqueName('seeded');
    const fenceKey = (redlock: Redlock) => redlock.lock(name).keys.fence;
    const direct = [a.client(), b.client(), c.client()];

    // A's counter is ahead of B's and C's, as after acquisitions on majorities without B and C.
    const probe = new Redlock(direct, { prefix: fx.prefix });
    await direct[0]!.set(fenceKey(probe), 9);
    await direct[1]!.set(fenceKey(probe), 5);
    await direct[2]!.set(fenceKey(probe), 5);
    await probe.close();

    // First holder: C is unreachable for it, so {A, B} grant: 10 and 6 (more if
    // a slow round had to be retried; the counters only ever grow).
    const first = fx.redlock({ instanceTimeoutMs: 200 }, [direct[0]!, direct[1]!, await cutOff(c)]);
    const lease1 = await first.lock(name).acquire({ leaseMs: 5_000 });
    expect(lease1.token).toBeGreaterThanOrEqual(10);
    // B was raised to the token before the lease was handed out; C never saw anything.
    expect(Number(await direct[1]!.get(fenceKey(first)))).toBe(lease1.token);
    expect(Number(await direct[2]!.get(fenceKey(first)))).toBe(5);
    // The lock hash carries the raised token too (in its '@<last request id>' field).
    const hash = await lockFields(direct[1]!, first.lock(name).keys.lock);
    const tokenField = Object.keys(hash).find((field) => field.startsWith('@') && field !== '@c');
    expect(tokenField !== undefined && hash[tokenField]).toBe(String(lease1.token));
    await lease1.release();

    // Second holder: A is unreachable for it, so {B, C} grant. Without the
    // raise B would have stayed near 6 and C gives 6: a token below the first.
    const second = fx.redlock({ instanceTimeoutMs: 200 }, [await cutOff(a), direct[1]!, direct[2]!]);
    const lease2 = await second.lock(name).acquire({ leaseMs: 5_000 });
    expect(lease2.token).toBeGreaterThan(lease1.token);
    await lease2.release();
  });
});

describe.each([
  [3, 1],
  [5, 2],
])('fencing while a different minority is down for each acquisition (%i instances, %i down)', (n, down) => {
  // Persistent servers: a restart keeps the counters, as production
  // instances must (see the README). No offline queue: commands meant for a
  // dead instance fail at once instead of being replayed after the restart,
  // so each instance really misses the acquisitions it was down for.
  const fx = useServers(n, { persistent: true });

  it('tokens strictly increase', async () => {
    const clients = fx.clients({ enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    const redlock = fx.redlock({ instanceTimeoutMs: 200 }, clients);
    const name = uniqueName('rotating');
    const tokens: number[] = [];
    const rounds = 2 * n;
    for (let k = 0; k < rounds; k++) {
      const victims = Array.from({ length: down }, (_, j) => (k + j) % n);
      await Promise.all(victims.map((i) => fx.servers[i]!.kill()));
      const lease = await redlock.lock(name).acquire({ leaseMs: 5_000, waitMs: 10_000 });
      tokens.push(lease.token);
      await lease.release();
      await Promise.all(victims.map((i) => fx.servers[i]!.restart()));
      await waitFor(() => clients.every((c) => c.status === 'ready'), { timeoutMs: 15_000 });
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
  }, 60_000);
});

/** Calls of one command on each server, from INFO commandstats (those inside scripts included). */
async function callsOf(servers: readonly RedisServer[], command: string): Promise<number[]> {
  return Promise.all(
    servers.map(async (server) => {
      const admin = server.client({ maxRetriesPerRequest: 1 });
      try {
        const info = await admin.info('commandstats');
        return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
      } finally {
        admin.disconnect();
      }
    }),
  );
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe.each([3, 5])('fencing with counters in step (%i instances)', (n) => {
  const fx = useServers(n);

  it('skips the raise round when a majority drew the token itself, and tokens still increase', async () => {
    // Generous instance timeout: the rounds are decided by a majority's answers, never by a timer.
    const redlock = fx.redlock({ instanceTimeoutMs: 10_000 });
    const lock = redlock.lock(uniqueName('in-step'));
    const admins = fx.servers.map((s) => s.client());
    const counters = () => Promise.all(admins.map((admin) => admin.get(lock.keys.fence).then(Number)));
    await (await lock.acquire()).release(); // scripts loaded everywhere
    // raise-fence reads the lock's fields with HKEYS; no other script does.
    const hkeys = sum(await callsOf(fx.servers, 'hkeys'));
    const scripts = sum(await callsOf(fx.servers, 'evalsha'));
    const tokens: number[] = [];
    for (let k = 0; k < 5; k++) {
      // Back to back: every release must reach every instance before the next acquisition.
      const lease = await lock.acquire();
      tokens.push(lease.token);
      await lease.release();
    }
    expect(tokens).toEqual([0, 1, 2, 3, 4].map((k) => tokens[0]! + k));
    // Every instance granted every lease and drew the same token: one acquire and one release per instance.
    await waitFor(async () => (await counters()).every((c) => c === tokens[4]));
    expect(sum(await callsOf(fx.servers, 'evalsha'))).toBe(scripts + 5 * 2 * n);
    expect(sum(await callsOf(fx.servers, 'hkeys'))).toBe(hkeys);
    for (const admin of admins) admin.disconnect();
  });
});

describe('fencing with counters in step after instances restart empty', () => {
  const fx = useServers(3);

  it('a lease whose majority drew the token raises the lagging instance before its release there', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const clients = fx.clients({ enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    const redlock = fx.redlock({ instanceTimeoutMs: 200 }, clients);
    const lock = redlock.lock(uniqueName('restarted'));
    const counterOn = async (server: RedisServer) => {
      const admin = server.client({ maxRetriesPerRequest: 1 });
      try {
        return Number(await admin.get(lock.keys.fence));
      } finally {
        admin.disconnect();
      }
    };
    const ready = () => waitFor(() => clients.every((client) => client.status === 'ready'), { timeoutMs: 15_000 });
    const cycle = async () => {
      const lease = await lock.acquire({ waitMs: 10_000 });
      await lease.release();
      return lease;
    };
    await cycle();
    const before = await cycle();

    // C comes back without its counter: A and B still draw the largest token together.
    await c.restart();
    await ready();
    const lease = await lock.acquire({ waitMs: 10_000 });
    expect(lease.token).toBeGreaterThan(before.token);
    // C drew a token far below it (its counter started over), unless the round
    // was decided by A and C, whose tokens differ: then the fence round raised C.
    // The token read after the lease was handed out is the one every later lease exceeds.
    const token = lease.token;
    await lease.release();
    // The release reaches C only after C's counter was raised to the token.
    await waitFor(async () => (await counterOn(c)) >= token);

    // B loses its counter too and A is down: {B, C} grant, and C still carries the token.
    await b.restart();
    await a.kill();
    await waitFor(() => clients[1]!.status === 'ready' && clients[2]!.status === 'ready', { timeoutMs: 15_000 });
    const after = await lock.acquire({ waitMs: 10_000 });
    expect(after.token).toBeGreaterThan(token);
    await after.release();
    await a.restart();
    await ready();
  }, 60_000);
});
