import { afterEach, describe, expect, it } from 'vitest';
import { sleep, uniqueName, waitFor } from '@holdfast/test-utils';
import { checkHistory, summarize, HistoryRecorder } from '@holdfast/test-utils/models';
import { NAME, cluster, write, type Cluster } from './redlock-cluster.js';
import { saveReport } from './report.js';
import { SIZES, TIMEOUT_MS } from './sizes.js';

/** Two Redlock clients on one fresh prefix, their `lost` events recorded. */
function rivals(on: Cluster) {
  const prefix = uniqueName('chaos');
  const history = new HistoryRecorder();
  const first = on.redlock(prefix);
  const second = on.redlock(prefix);
  first.on('lost', ({ reason }) => history.record('first', NAME, 'lost', { reason }));
  second.on('lost', ({ reason }) => history.record('second', NAME, 'lost', { reason }));
  return { history, first, second };
}

describe('chaos: Redlock with a node restarted', () => {
  let current: Cluster | undefined;
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });

  it(
    'restarted empty right after granting: the checker flags the overlap it allows',
    async () => {
      const flagged: number[] = [];
      const inversions: number[] = [];
      for (let run = 0; run < SIZES.redlockRuns; run++) {
        current = await cluster(false);
        const { nodes, resource } = current;
        const { history, first, second } = rivals(current);

        // Node 2 down while `first` acquires: its majority is exactly nodes 0 and 1.
        await nodes[2]!.kill();
        history.record('first', NAME, 'acquire-invoke');
        const lease = await first.lock(NAME).acquire({ leaseMs: 20_000, waitMs: 5_000 });
        history.record('first', NAME, 'acquire-ok', { token: lease.token, holdCount: 1 });
        await nodes[2]!.restart();
        // Node 0, one of the granting pair, crashes and comes back at once, empty.
        await nodes[0]!.restart();

        history.record('second', NAME, 'acquire-invoke');
        const next = await second.lock(NAME).acquire({ leaseMs: 20_000, waitMs: 10_000 });
        history.record('second', NAME, 'acquire-ok', { token: next.token, holdCount: 1 });
        // `first` was told nothing: it still acts on the lock.
        await write(history, 'first', resource, lease.token);
        await write(history, 'second', resource, next.token);
        history.record('second', NAME, 'release-invoke', { holdCount: 1 });
        await next.release();
        history.record('first', NAME, 'release-invoke', { holdCount: 1 });
        await lease.release().catch(() => {});
        const check = checkHistory(history.events);
        flagged.push(check.overlaps.length);
        inversions.push(check.inversions.length);
        expect(check.overlaps.length, summarize(check)).toBeGreaterThanOrEqual(1);
        await current.stop();
        current = undefined;
      }
      saveReport({
        id: '08-redlock-restart-empty',
        fault: 'Redlock 3 nodes, no persistence: a granting node SIGKILLed and restarted empty at once',
        expected: 'a second client takes the lock on the new majority; the checker flags the overlap',
        metric: 'runs where the checker flagged ≥ 1 overlap (token inversions flagged)',
        result: `${flagged.filter((n) => n >= 1).length}/${flagged.length} (${inversions.reduce((a, b) => a + b, 0)})`,
      });
    },
    TIMEOUT_MS,
  );

  it(
    'with appendfsync always and the restart delayed past the lease: no overlap, no inversion',
    async () => {
      const results: string[] = [];
      for (let run = 0; run < SIZES.redlockRuns; run++) {
        current = await cluster(true);
        const { nodes, resource } = current;
        const { history, first, second } = rivals(current);
        const leaseMs = 1_500;

        await nodes[2]!.kill();
        history.record('first', NAME, 'acquire-invoke');
        const lease = await first.lock(NAME).acquire({ leaseMs, waitMs: 5_000 });
        history.record('first', NAME, 'acquire-ok', { token: lease.token, holdCount: 1 });
        await nodes[2]!.restart();
        await nodes[0]!.kill();
        const restartLater = sleep(leaseMs + 500).then(() => nodes[0]!.restart());

        // The rival keeps trying while node 0 is down; `first` keeps acting while it believes it holds.
        const rival = (async () => {
          history.record('second', NAME, 'acquire-invoke');
          const next = await second.lock(NAME).acquire({ leaseMs: 5_000, waitMs: 10_000 });
          history.record('second', NAME, 'acquire-ok', { token: next.token, holdCount: 1 });
          await write(history, 'second', resource, next.token);
          history.record('second', NAME, 'release-invoke', { holdCount: 1 });
          await next.release();
        })();
        while (!lease.signal.aborted) {
          await write(history, 'first', resource, lease.token);
          await sleep(50);
        }
        await rival;
        await restartLater;
        await waitFor(() => history.events.some((e) => e.holder === 'first' && e.type === 'lost'));
        const check = checkHistory(history.events);
        results.push(`${check.overlaps.length}/${check.inversions.length}/${check.staleWrites.length}`);
        expect(check.overlaps, summarize(check)).toEqual([]);
        expect(check.inversions, summarize(check)).toEqual([]);
        expect(check.staleWrites).toEqual([]);
        await current.stop();
        current = undefined;
      }
      saveReport({
        id: '09-redlock-restart-durable',
        fault: 'Redlock 3 nodes, appendfsync always: a granting node down past the lease, then restarted',
        expected: 'the rival gets the lock only after the holder was told lost; tokens keep increasing',
        metric: 'overlaps / inversions / stale writes accepted, per run',
        result: results.join(', '),
      });
    },
    TIMEOUT_MS,
  );
});
