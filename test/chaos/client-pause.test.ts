import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, startRedisServers, uniqueName, type RedisServer } from '@holdfast/test-utils';
import { checkHistory, summarize, type HistoryEvent } from '@holdfast/test-utils/models';
import { pauseProcess } from './nemesis/process-pause.js';
import { saveReport } from './report.js';
import { SIZES, TIMEOUT_MS } from './sizes.js';
import { runFleet } from './support.js';
import { assertBuilt, cleanExit } from './workers.js';

const LEASE_MS = 400;
const PAUSE_MS = 1_000;

/**
 * For each resume of the paused worker: did its first step on the lock it held
 * when frozen tell it `lost`, or was it a fenced write?
 */
function firstAfterResume(history: readonly HistoryEvent[], holder: string, resumedAt: bigint[]): ('lost' | 'write' | 'none')[] {
  return resumedAt.map((t) => {
    const next = history.find((e) => e.holder === holder && e.t >= t && (e.type === 'lost' || e.type === 'write-invoke'));
    return next === undefined ? 'none' : next.type === 'lost' ? 'lost' : 'write';
  });
}

describe('chaos: a worker process frozen (SIGSTOP) past its lease', () => {
  let lockServer: RedisServer;
  let resourceServer: RedisServer;

  beforeAll(async () => {
    assertBuilt();
    [lockServer, resourceServer] = (await startRedisServers(2)) as [RedisServer, RedisServer];
  });
  afterAll(async () => {
    await Promise.all([lockServer?.stop(), resourceServer?.stop()]);
  });

  it(
    'tells the stale holder `lost` on resume before its next fenced write; the fence accepts no stale write',
    async () => {
      const trials = SIZES.pauseTrials;
      const prefix = uniqueName('chaos');
      const common = {
        redisUrl: lockServer.url,
        resourceUrl: resourceServer.url,
        prefix,
        locks: ['paused'],
        leaseMs: LEASE_MS,
        holdMs: [150, 150] as [number, number],
        counter: false,
        durationMs: trials * (PAUSE_MS + 600) + 500,
      };
      const resumedAt: bigint[] = [];
      const { history, exits } = await runFleet(
        [{ ...common, proc: 'frozen' }, { ...common, proc: 'other' }],
        async ([frozen]) => {
          for (let trial = 0; trial < trials; trial++) {
            await frozen!.next((e) => e.type === 'acquire-ok' && e.holdCount === 1);
            resumedAt.push(await pauseProcess(frozen!, PAUSE_MS));
            await sleep(200);
          }
        },
      );
      const check = checkHistory(history);
      const firsts = firstAfterResume(history, 'frozenw0', resumedAt);
      const lostFirst = firsts.filter((f) => f === 'lost').length;
      const staleAttempts = history.filter((e) => e.holder === 'frozenw0' && e.type === 'write-invoke').length;
      saveReport({
        id: '02-client-pause',
        fault: `worker SIGSTOP ${PAUSE_MS} ms (lease ${LEASE_MS} ms) right after it acquired, then SIGCONT`,
        expected: '`lost` reported on resume before the next fenced write; the fence rejects stale writes',
        metric: 'resumes where `lost` came first / stale writes accepted / overlaps',
        result: `${lostFirst}/${trials} / ${check.staleWrites.length + check.acceptedAfterLost} / ${check.overlaps.length}`,
      });
      expect(exits.filter((exit) => !cleanExit(exit))).toEqual([]);
      expect(staleAttempts).toBeGreaterThanOrEqual(0);
      expect(check.staleWrites).toEqual([]);
      expect(check.acceptedAfterLost).toBe(0);
      expect(check.inversions).toEqual([]);
      expect(firsts).toEqual(firsts.map(() => 'lost'));
      expect(check.overlaps, summarize(check)).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
