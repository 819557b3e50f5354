import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '@holdfast/core';
import { scripts } from '@holdfast/core/internal';
import { Watchdog } from '@holdfast/watchdog';
import { sleep, startRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { monitorCommands, type AppliedCommand } from './monitor.js';
import { saveReport } from './report.js';
import { SIZES, TIMEOUT_MS } from './sizes.js';

const LOOPS = 8;

/** The scripts a lease's last release may run (each takes the owner as its first ARGV; Redlock's release-taken.lua the string lock, which starts with the owner and '@'). */
const RELEASES = [scripts.release, scripts.releaseAll, scripts.releaseTaken];

/** Owners named by each applied renew and release script, in apply order. */
function renewalsAfterRelease(commands: readonly AppliedCommand[]): { renewals: number; late: number; releases: number } {
  const released = new Set<string>();
  let renewals = 0;
  let late = 0;
  for (const { args } of commands) {
    if (args[0]?.toLowerCase() !== 'evalsha' && args[0]?.toLowerCase() !== 'eval') continue;
    const sha = args[0].toLowerCase() === 'evalsha' ? args[1] : undefined;
    const numKeys = Number(args[2]);
    const argv = args.slice(3 + numKeys);
    if (RELEASES.some((script) => sha === script.sha || args[1] === script.source)) {
      released.add(argv[0]!.split('@')[0]!);
    } else if (sha === scripts.renew.sha || args[1] === scripts.renew.source) {
      for (const owner of argv.slice(1)) {
        renewals++;
        if (released.has(owner)) late++;
      }
    }
  }
  return { renewals, late, releases: released.size };
}

describe('chaos: watchdog renewals racing releases', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(
    'never applies a renewal of a lease after its release',
    async () => {
      const prefix = uniqueName('chaos');
      const log = await monitorCommands(server.client());
      const redis = server.client();
      const locks = new LockClient(redis, { prefix });
      // 50 ms between ticks, and every tick renews every held lease: releases land before,
      // during and after renewals. The lease itself is long, so a machine too busy to tick on
      // time does not lose one: what is under test is the order of renewals and releases.
      const dog = new Watchdog(locks, { timeoutMs: 5_000, renewIntervalMs: 50 });
      dog.on('error', () => {});
      const lost: string[] = [];
      locks.on('lost', ({ reason }) => lost.push(reason));
      const cycles = SIZES.renewReleaseCycles;
      let started = 0;
      await Promise.all(
        Array.from({ length: LOOPS }, async (_, loop) => {
          const lock = locks.lock(`race-${loop}`);
          while (started < cycles) {
            started++;
            const lease = await lock.acquire();
            await sleep(Math.floor(Math.random() * 60));
            await lease.release();
          }
        }),
      );
      await locks.close();
      redis.disconnect();
      // MONITOR lines trail the replies a little: wait until every release is in the log.
      await waitFor(() => renewalsAfterRelease(log.commands).releases >= cycles, { timeoutMs: 5_000 });
      log.stop();
      const { renewals, late, releases } = renewalsAfterRelease(log.commands);
      saveReport({
        id: '05-renew-release-race',
        fault: `${cycles} acquire/hold 0-60 ms/release cycles on ${LOOPS} locks, watchdog ticking every 50 ms`,
        expected: 'a released lease leaves renewal before its release is sent',
        metric: 'renewals applied after the release of their lease',
        result: `${late} (of ${renewals} renewals, ${releases} releases)`,
      });
      expect(releases).toBe(cycles);
      expect(renewals).toBeGreaterThan(0);
      expect(late).toBe(0);
      expect(lost).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
