import { type RenewalResult } from '@holdfast/core';
import { planRenewal, replies, runScript, scripts } from '@holdfast/core/internal';
import type { RedlockContext } from './context.js';
import { QuorumError, type InstanceOutcome } from './errors.js';
import { fanOut } from './fan-out.js';
import type { RedlockHold } from './hold.js';
import { holdVerdict, lostReason } from './quorum.js';
import { restoreInBackground } from './restore.js';

type PerHold = 'renewed' | 'deleted' | 'taken';

async function renewOn(ctx: RedlockContext, i: number, holds: readonly RedlockHold[]): Promise<PerHold[]> {
  const redis = ctx.instances[i]!;
  const calls = planRenewal(holds, redis.isCluster);
  const result = new Array<PerHold>(holds.length);
  await Promise.all(
    calls.map(async (batch) => {
      const batchHolds = batch.map((index) => holds[index]!);
      const reply = await runScript(
        redis,
        scripts.renew,
        batchHolds.map((h) => h.keys.lock),
        [batchHolds[0]!.leaseMs, batchHolds.map((h) => h.owner).join(' ')],
      );
      replies.renewReply(reply, batch.length).forEach((lost, k) => {
        result[batch[k]!] = lost ?? 'renewed';
      });
    }),
  );
  return result;
}

/**
 * The watchdog's tick over a quorum: every instance renews every hold, each
 * instance's answer bounded by `instanceTimeoutMs`. A hold is renewed when a
 * majority renewed it, lost when a majority can no longer be its own, failed
 * otherwise. The renew script never re-creates a key; a renewed hold is put
 * back afterwards on the instances that answered "gone", even late (see
 * restore.ts), never on those that answered "taken". Never rejects.
 */
export async function renewOnQuorum(ctx: RedlockContext, holds: readonly RedlockHold[]): Promise<RenewalResult[]> {
  const { quorum } = ctx;
  const n = ctx.instances.length;
  const perHold = (outcomes: readonly InstanceOutcome[], answers: readonly (PerHold[] | undefined)[], h: number) =>
    outcomes.map((o): InstanceOutcome => {
      const value = answers[o.instance]?.[h];
      if (o.status !== 'ok' || value === undefined) return o;
      return value === 'renewed' ? o : { instance: o.instance, status: 'not-held', reason: value };
    });
  const values: (PerHold[] | undefined)[] = new Array(n).fill(undefined);
  const calls: Promise<PerHold[]>[] = [];
  const { outcomes } = await fanOut(
    n,
    (i) =>
      (calls[i] = renewOn(ctx, i, holds)).then((r) => {
        values[i] = r;
        return r;
      }),
    {
      timeoutMs: ctx.options.instanceTimeoutMs,
      timeouts: ctx.timeouts,
      classify: (instance) => ({ instance, status: 'ok' }),
      // Done once no hold's verdict can change any more.
      decided: (o) => holds.every((_, h) => holdVerdict(perHold(o, values, h), quorum) !== 'unknown'),
    },
  );
  const verdicts = holds.map((_, h) => holdVerdict(perHold(outcomes, values, h), quorum));
  // Answers that came after the decision count too: the slowest instance is often the restarted one.
  calls.forEach((call, i) =>
    call.then(
      (answer) =>
        answer.forEach((value, h) => {
          if (value === 'deleted' && verdicts[h] === 'ok') restoreInBackground(ctx, holds[h]!, i);
        }),
      () => undefined,
    ),
  );
  return holds.map((hold, h): RenewalResult => {
    const mine = perHold(outcomes, values, h);
    const verdict = verdicts[h]!;
    if (verdict === 'ok') return { status: 'renewed' };
    if (verdict === 'lost') return { status: 'lost', reason: lostReason(mine) };
    const error = new QuorumError({
      lockName: hold.name,
      operation: 'renew',
      reason: 'unreachable',
      quorum,
      outcomes: mine,
    });
    return { status: 'failed', error };
  });
}
