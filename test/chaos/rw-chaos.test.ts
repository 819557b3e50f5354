import { LockClient, type Lease } from '@holdfast/core';
import { uniqueName, useProxiedServer } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { buildTenures, HistoryRecorder, findRwTokenViolations, findWriterOverlaps, rwLockName } from '@holdfast/test-utils/models';
import { FULL, TIMEOUT_MS } from './sizes.js';

const READERS = 4;
const WRITERS = 2;
const SECTIONS = FULL ? 2_000 : 60;

/**
 * Readers and writers (some downgrading) of one read-write lock over three
 * clients behind a proxy that drops replies after Redis applied the command
 * (ioredis resends), with SCRIPT FLUSH between: the history must show no
 * writer overlapping any reader or writer, and tokens that order as the
 * README says.
 */
describe('chaos: read-write lock under lost replies and SCRIPT FLUSH', () => {
  // A redis-server of this block's own, with a FaultProxy in front.
  const fx = useProxiedServer();

  it(
    'no writer overlaps a reader or a writer; tokens order reads and writes',
    async () => {
      const prefix = uniqueName('rwchaos');
      const history = new HistoryRecorder();
      const redis = [0, 1, 2].map(() => fx.throughProxy());
      const clients = redis.map((r) => new LockClient(r, { prefix, leaseMs: 3_000, commandTimeoutMs: 2_000 }));
      for (const c of clients) c.on('error', () => undefined);
      const admin = fx.server.client();
      const failures: string[] = [];
      let faults = 0;

      // A fault after every 8th section, one at a time: a drop is armed only
      // after the last one hit (each closes a connection, and ioredis resends
      // what it had in flight); every third fault is a SCRIPT FLUSH instead.
      let done = 0;
      let armed = false;
      const afterSection = async () => {
        if (++done % 8 !== 0) return;
        if (faults % 3 === 2) {
          faults++;
          await admin.script('FLUSH');
        } else if (!armed) {
          faults++;
          armed = true;
          void fx.proxy.dropNextReply().then(() => (armed = false));
        }
      };

      const section = async (holder: string, client: LockClient, side: 'read' | 'write', downgrade: boolean) => {
        const doc = client.readWriteLock('doc');
        const lock = rwLockName('doc', side);
        history.record(holder, lock, 'acquire-invoke');
        let downgraded: Lease | undefined;
        await doc[side]
          .withLock(async (lease) => {
            history.record(holder, lock, 'acquire-ok', { token: lease.token, holdCount: 1 });
            lease.signal.addEventListener('abort', () => history.record(holder, lock, 'lost'));
            await new Promise((r) => setImmediate(r));
            if (downgrade) {
              history.record(holder, rwLockName('doc', 'read'), 'acquire-invoke');
              downgraded = await doc.read.acquire();
              history.record(holder, rwLockName('doc', 'read'), 'acquire-ok', { token: downgraded.token, holdCount: 1 });
            }
            history.record(holder, lock, 'counter-read');
            if (!lease.signal.aborted) history.record(holder, lock, 'release-invoke', { holdCount: 1 });
          })
          .catch((error: unknown) => {
            history.record(holder, lock, 'acquire-fail');
            failures.push(`${holder}: ${(error as { code?: string }).code ?? String(error)}`);
          });
        if (downgraded) {
          await new Promise((r) => setImmediate(r));
          history.record(holder, rwLockName('doc', 'read'), 'release-invoke', { holdCount: 1 });
          await downgraded.release().catch((error: unknown) => failures.push(`${holder} downgrade: ${String(error)}`));
        }
      };

      const workers = [
        ...Array.from({ length: READERS }, (_, i) => ({ holder: `reader-${i}`, side: 'read' as const })),
        ...Array.from({ length: WRITERS }, (_, i) => ({ holder: `writer-${i}`, side: 'write' as const })),
      ].map(async ({ holder, side }, i) => {
        for (let n = 0; n < SECTIONS; n++) {
          await section(holder, clients[i % clients.length]!, side, side === 'write' && n % 3 === 0);
          await afterSection();
        }
      });
      await Promise.all(workers);

      const { tenures } = buildTenures(history.events);
      const overlaps = findWriterOverlaps(tenures);
      const tokens = findRwTokenViolations(tenures);
      const writes = tenures.filter((t) => t.lock.endsWith('#write')).length;
      await Promise.all(clients.map((c) => c.close()));
      for (const r of redis) r.disconnect();
      admin.disconnect();
      // A call whose connection dropped more often than its retries allow fails with a
      // transient Redis error (its hold then expires by its lease); nothing else may fail.
      expect(failures.filter((f) => !/ERR_REDIS/.test(f))).toEqual([]);
      expect(failures.length).toBeLessThan((READERS + WRITERS) * SECTIONS * 0.1);
      expect(tenures.length).toBeGreaterThan((READERS + WRITERS) * SECTIONS * 0.9);
      expect(writes).toBeGreaterThan(WRITERS * SECTIONS * 0.9);
      expect(faults).toBeGreaterThan(((READERS + WRITERS) * SECTIONS) / 8 / 2);
      expect(overlaps.map((o) => `${o.writer.holder}#${o.writer.token} / ${o.other.holder}#${o.other.token}`)).toEqual([]);
      expect(tokens.map((v) => `${v.rule}: ${v.earlier.token} then ${v.later.token}`)).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
