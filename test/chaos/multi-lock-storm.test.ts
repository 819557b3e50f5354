import { LockClient, lockKeys, type Lease, type MultiLease } from '@holdfast/core/workspace';
import { startRedis, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { checkHistory, summarize, expandMultiLock, type MultiLockEvent } from '@holdfast/test-utils/models';
import { clientKillStorm, scriptFlushStorm } from './nemesis/redis-admin.js';
import { saveReport } from './report.js';
import { FULL, TIMEOUT_MS } from './sizes.js';
import { keysLeft } from './support.js';

const ACTORS = FULL ? 8 : 4;
const DURATION_MS = FULL ? 30_000 : 3_000;
const PREFIX = 'chaos-multi';

/** Six names: three sharing one hash slot (taken by one script call), three in slots of their own. */
function namePool(): string[] {
  const slotOf = (name: string) => lockKeys(PREFIX, name).slot;
  const shared: string[] = [];
  const alone: string[] = [];
  for (let i = 0; shared.length < 3 || alone.length < 3; i++) {
    const name = `acct-${i}`;
    if (shared.length === 0 || slotOf(name) === slotOf(shared[0]!)) {
      if (shared.length < 3) shared.push(name);
    } else if (alone.length < 3 && !alone.some((other) => slotOf(other) === slotOf(name))) {
      alone.push(name);
    }
  }
  return [...shared, ...alone];
}

/**
 * Multi-locks and plain locks over overlapping names from several clients,
 * while connections are killed (replies lost after the server applied the
 * call: resends) and the script cache is flushed. Every multi-lock records one
 * event for its whole set; the checker judges each name on its own.
 */
describe('chaos: multi-locks', () => {
  it(
    'CLIENT KILL + SCRIPT FLUSH storms: every name of every multi-lock exclusive, tokens increasing, nothing left',
    async () => {
      const server = await startRedis();
      // A plain lock's events name it; a multi-lock's carry every name (`locks`).
      const events: MultiLockEvent[] = [];
      const record = (holder: string, locks: string[], type: MultiLockEvent['type'], fields: Partial<MultiLockEvent> = {}) => {
        const which = locks.length === 1 ? { lock: locks[0]! } : { lock: 'multi', locks };
        events.push({ ...fields, ...which, t: process.hrtime.bigint(), holder, type });
      };
      const pool = namePool();
      const inside = new Map<string, number>();
      let overlapsSeen = 0;
      let sections = 0;
      let multiSections = 0;
      const failed = new Map<string, number>();
      const clients: LockClient[] = [];
      const nemeses = [clientKillStorm(server, 100, 300), scriptFlushStorm(server, 20, 80)];
      const stopAt = performance.now() + DURATION_MS;
      try {
        await Promise.all(
          Array.from({ length: ACTORS }, async (_, actor) => {
            const redis = server.client();
            redis.on('error', () => undefined);
            const locks = new LockClient(redis, { prefix: PREFIX, leaseMs: 10_000 });
            locks.on('error', () => undefined);
            clients.push(locks);
            const holder = `actor-${actor}`;
            while (performance.now() < stopAt) {
              // 1 to 3 distinct names, in a random order.
              const names = [...pool].sort(() => Math.random() - 0.5).slice(0, 1 + Math.floor(Math.random() * 3));
              record(holder, names, 'acquire-invoke');
              let lease: MultiLease | Lease;
              try {
                lease =
                  names.length === 1
                    ? await locks.lock(names[0]!).acquire({ waitMs: 20_000 })
                    : await locks.multiLock(names).acquire({ waitMs: 20_000 });
              } catch (error) {
                const code = (error as { code?: string }).code ?? String(error);
                failed.set(code, (failed.get(code) ?? 0) + 1);
                record(holder, names, 'acquire-fail');
                continue;
              }
              const tokens = 'tokens' in lease ? names.map((name) => lease.tokens.get(name)!) : [lease.token];
              record(holder, names, 'acquire-ok', { holdCount: 1, token: tokens[0]!, ...(names.length > 1 ? { tokens } : {}) });
              lease.signal.addEventListener('abort', () => record(holder, names, 'lost', { reason: String(lease.signal.reason) }), { once: true });
              for (const name of names) {
                inside.set(name, (inside.get(name) ?? 0) + 1);
                if (inside.get(name)! > 1) overlapsSeen++;
              }
              await new Promise((resolve) => setImmediate(resolve));
              if (lease.isHeld) record(holder, names, 'counter-write', { resource: names.join('+') });
              for (const name of names) inside.set(name, inside.get(name)! - 1);
              record(holder, names, 'release-invoke', { holdCount: 1 });
              await lease.release().then(
                () => record(holder, names, 'release-ok'),
                () => record(holder, names, 'release-fail'),
              );
              sections++;
              if (names.length > 1) multiSections++;
            }
          }),
        );
      } finally {
        await Promise.all(nemeses.map((nemesis) => nemesis.stop()));
        await Promise.all(clients.map((client) => client.close()));
      }
      const check = checkHistory(expandMultiLock(events));
      const admin = server.client();
      let left: string[] = [];
      await waitFor(async () => (left = await keysLeft(admin, PREFIX)).length === 0, { timeoutMs: 15_000 }).catch(() => undefined);
      await server.stop();
      const faults = nemeses.reduce((sum, nemesis) => sum + nemesis.stats.applied, 0);
      saveReport({
        id: '21-multi-lock-storm',
        fault: `${ACTORS} clients taking 1-3 of 6 names (3 in one hash slot) as multi-locks or plain locks; CLIENT KILL every 100-300 ms and SCRIPT FLUSH every 20-80 ms`,
        expected: 'every name of a multi-lock exclusive against plain locks and other multi-locks; tokens increasing per name; no deadlock; no key left',
        metric: 'sections (multi-lock) / overlaps / inversions / keys left',
        result:
          `${sections} (${multiSections}) sections, ${faults} faults: ${check.overlaps.length} / ${check.inversions.length} / ${left.length}` +
          `; failed: ${failed.size === 0 ? 'none' : JSON.stringify(Object.fromEntries(failed))}`,
      });
      expect(multiSections).toBeGreaterThan(0);
      expect(overlapsSeen).toBe(0);
      expect(check.overlaps, summarize(check)).toEqual([]);
      expect(check.inversions, summarize(check)).toEqual([]);
      expect(left).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
