import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHoldfastError } from '@holdfast/core';
import type { Redlock } from '@holdfast/redlock';
import { sleep, uniqueName } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { checkHistory, summarize, HistoryRecorder } from '@holdfast/test-utils/models';
import { jitter, storm } from './nemesis/storm.js';
import { NAME, cluster, write, type Cluster } from './redlock-cluster.js';
import { saveReport } from './report.js';
import { SIZES, TIMEOUT_MS } from './sizes.js';

const PAUSE_MS = 300;

/** One sequential actor: critical sections with one fenced write each, until `stopAt`. */
async function actor(redlock: Redlock, holder: string, history: HistoryRecorder, resource: Redis, stopAt: number) {
  while (performance.now() < stopAt) {
    history.record(holder, NAME, 'acquire-invoke');
    try {
      await redlock.lock(NAME).withLock(
        async (lease) => {
          history.record(holder, NAME, 'acquire-ok', { token: lease.token, holdCount: lease.holdCount });
          await sleep(Math.floor(Math.random() * 10));
          if (!lease.signal.aborted) await write(history, holder, resource, lease.token);
          if (!lease.signal.aborted) history.record(holder, NAME, 'release-invoke', { holdCount: 1 });
        },
        { waitMs: 3_000, leaseMs: 2_000 },
      );
      history.record(holder, NAME, 'release-ok');
    } catch (error) {
      if (!isHoldfastError(error)) throw error;
      history.record(holder, NAME, 'acquire-fail', { reason: error.code });
    }
  }
}

describe('chaos: Redlock with a rotating minority frozen', () => {
  let current: Cluster;
  beforeAll(async () => {
    current = await cluster(false);
  });
  afterAll(async () => {
    await current?.stop();
  });

  it(
    'keeps sections exclusive and tokens increasing while one node at a time is frozen',
    async () => {
      const prefix = uniqueName('chaos');
      const history = new HistoryRecorder();
      const clients = [current.redlock(prefix), current.redlock(prefix)];
      const holderOf = new Map<number, string>();
      for (const [c, redlock] of clients.entries()) {
        redlock.on('acquired', ({ token, reentrant }) => {
          if (!reentrant) holderOf.set(token, `c${c}`);
        });
        redlock.on('lost', ({ token, reason }) => history.record(holderOf.get(token) ?? '?', NAME, 'lost', { token, reason }));
      }
      let turn = 0;
      const nemesis = storm('rotating minority SIGSTOP', jitter(100, 300), async () => {
        const node = current.nodes[turn++ % current.nodes.length]!;
        node.pause();
        await sleep(PAUSE_MS);
        node.resume();
      });
      const stopAt = performance.now() + SIZES.stormMs;
      await Promise.all(
        clients.flatMap((redlock, c) =>
          [0, 1].map((a) => actor(redlock, `c${c}a${a}`, history, current.resource, stopAt)),
        ),
      );
      await nemesis.stop();
      const check = checkHistory(history.events);
      const sections = check.tenures.length;
      saveReport({
        id: '06-redlock-rotating-minority',
        fault: `Redlock 3 nodes: one node at a time SIGSTOPped ${PAUSE_MS} ms, every 100-300 ms`,
        expected: 'every operation still reaches a majority; no overlap, tokens increasing',
        metric: 'sections / overlaps / inversions / stale writes accepted',
        result: `${sections} / ${check.overlaps.length} / ${check.inversions.length} / ${check.staleWrites.length} (${nemesis.stats.applied} pauses)`,
      });
      expect(sections).toBeGreaterThan(0);
      expect(nemesis.stats.applied).toBeGreaterThan(0);
      expect(check.overlaps, summarize(check)).toEqual([]);
      expect(check.inversions, summarize(check)).toEqual([]);
      expect(check.staleWrites).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
