import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServers, uniqueName, type RedisServer } from '@holdfast/test-utils';
import { checkHistory, summarize } from '@holdfast/test-utils/models';
import { saveReport } from './report.js';
import { SIZES, TIMEOUT_MS } from './sizes.js';
import { counterChecks, keysLeft, runFleet, sectionsCompleted } from './support.js';
import { assertBuilt, cleanExit } from './workers.js';

describe('chaos baseline: no fault', () => {
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
    'keeps every critical section exclusive, tokens increasing and the unguarded counter exact',
    async () => {
      const { processes, workers, sections } = SIZES.baseline;
      const prefix = uniqueName('chaos');
      const perWorker = Math.ceil(sections / (processes * workers));
      const { history, exits } = await runFleet(
        Array.from({ length: processes }, (_, p) => ({
          proc: `p${p}`,
          redisUrl: lockServer.url,
          resourceUrl: resourceServer.url,
          prefix,
          workers,
          sections: perWorker,
          locks: ['a', 'b'],
          reentryRate: 0.1,
          counterSleepMs: [0, 1] as [number, number],
        })),
      );
      const check = checkHistory(history);
      const resource = resourceServer.client();
      const counters = await counterChecks(history, resource);
      const left = await keysLeft(lockServer.client(), prefix);
      const lostUpdates = counters.reduce((sum, c) => sum + c.lostUpdates, 0);
      const done = sectionsCompleted(history);
      saveReport({
        id: '01-baseline',
        fault: 'none',
        expected: 'exclusive sections, increasing tokens, exact counter, no keys left',
        metric: 'overlaps / inversions / stale writes / lost updates / keys left',
        result: `${processes}×${workers} workers, ${done} sections: ${check.overlaps.length} / ${check.inversions.length} / ${check.staleWrites.length} / ${lostUpdates} / ${left.length}`,
      });
      expect(exits.filter((exit) => !cleanExit(exit))).toEqual([]);
      expect(done).toBe(perWorker * processes * workers);
      expect(check.overlaps, summarize(check)).toEqual([]);
      expect(check.inversions, summarize(check)).toEqual([]);
      expect(check.staleWrites).toEqual([]);
      expect(check.writesRejected).toBe(0);
      expect(lostUpdates).toBe(0);
      expect(left).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
