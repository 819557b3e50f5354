import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@holdfast/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSyncServer } from '../latch/latch-fixture.js';
import { allHandled, Fleet, readLogs } from './fleet.js';
import { checkInboxHistory, type InboxLine } from '@holdfast/test-utils/models';

const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

describe('inbox across processes, with faults', () => {
  const fx = useSyncServer();

  beforeAll(() => {
    if (!existsSync(BUILT)) throw new Error('packages/core is not built: run `pnpm build` first');
  });

  it('a processor SIGKILLed and one SIGSTOPped past its lease mid-call: every stored message handled, in order, redelivered only when unfinished', async () => {
    const prefix = fx.prefix();
    const fleet = new Fleet();
    const base = { redisUrl: `redis://${fx.server.host}:${fx.server.port}`, prefix, name: 'threads', posts: 150, keys: 10, leaseMs: 1_000 };
    const killed = fleet.spawn({ ...base, index: 0, seed: 7, holdAt: 5 });
    const frozen = fleet.spawn({ ...base, index: 1, seed: 8, holdAt: 5 });
    const others = [2, 3].map((index) => fleet.spawn({ ...base, index, seed: 9 + index }));
    fx.onCleanup(() => {
      for (const child of fleet.children) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
    });
    const heldBy = (pid: number | undefined) => (lines: readonly InboxLine[]) => lines.find((l) => l.ev === 'held' && l.pid === pid);

    // One process dies in the middle of a handler call.
    await fleet.until((lines) => heldBy(killed.pid)(lines) !== undefined);
    killed.kill('SIGKILL');
    // Another freezes in the middle of one, past its lease, until another process handled the
    // messages of that call's key with a greater token; then it resumes and finishes the call.
    await fleet.until((lines) => heldBy(frozen.pid)(lines) !== undefined);
    const held = heldBy(frozen.pid)(fleet.lines)!;
    frozen.kill('SIGSTOP');
    await fleet.until((lines) => lines.some((l) => l.ev === 'e' && l.key === held.key && l.token! > held.token! && l.pid !== frozen.pid));
    frozen.kill('SIGCONT');
    frozen.stdin!.write('go\n');

    await fleet.until((lines) => lines.filter((l) => l.ev === 'posted').length === 3 && allHandled(lines));
    // A post the killed process had in flight may have been stored unreported: it is handled too,
    // and then nothing is left (no queue, lease, counts or index record).
    await waitFor(async () => (await fx.redis().keys(`${prefix}:{*}:ib*`)).length === 0, { timeoutMs: 30_000 });
    for (const child of [frozen, ...others]) child.stdin!.write('stop\n');
    expect(await Promise.all(fleet.exits.slice(1))).toEqual([0, 0, 0]);

    const posted = new Set(fleet.lines.filter((l) => l.ev === 'p').map((l) => l.id!));
    expect(posted.size).toBeGreaterThanOrEqual(450);
    const logs = await readLogs(fx.redis(), prefix);
    // Stale: the killed and the frozen process, and any whose lease ran out under it on a loaded
    // machine (it reported the key lost): their finished calls may be handled again.
    const lostBy = new Set(fleet.lines.filter((l) => l.ev === 'lost').map((l) => l.pid));
    // A post is at-least-once (README): one in flight when its process froze can be sent again on
    // resume (its command timer runs out before the reply is read) and stored twice, so a message
    // of the frozen process may be handled twice; every other report still counts.
    const problems = checkInboxHistory(posted, logs, (pid) => pid === killed.pid || pid === frozen.pid || lostBy.has(pid));
    expect(problems.filter((p) => !/^message 1:\d+ handled again /.test(p))).toEqual([]);
    // The call the frozen process was making was taken over: handled again, with a greater token.
    const again = logs.get(held.key!)!.filter((entry) => entry.ev === 'e' && entry.token > held.token!);
    expect(again.length).toBeGreaterThan(0);
  }, 120_000);
});
