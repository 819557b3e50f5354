import { performance } from 'node:perf_hooks';
import { callRedis } from '@holdfast/core/internal';
import { restoreOn } from './calls.js';
import type { RedlockContext } from './context.js';
import type { RedlockHold } from './hold.js';

/**
 * Puts a hold back on an instance that answered "gone" while a majority
 * still renewed (or extended) it: an instance restarted without persistence,
 * or flushed, comes back empty, and without this a rolling restart (one
 * instance down at a time) would wear the lease down to a single instance.
 *
 * Safe because the majority that just confirmed the hold cannot belong to
 * anyone else: the key is written only where it is absent (never over another
 * owner's lock), and the instance's fencing counter is raised to the hold's
 * token at the same time, so no later grant there draws a smaller one.
 *
 * Runs in the background, in the hold's serialized queue: after any re-entry,
 * release or extend under way (so the hold count written is current, and a
 * release is never overtaken by a re-creation), and not at all once the hold
 * ended. Failures go to `error`; the next renewal tries again.
 */
export function restoreInBackground(ctx: RedlockContext, hold: RedlockHold, instance: number): void {
  if (hold.ended) return;
  // The counter may have gone with the key: a release re-raises it first unless the restore did.
  hold.raised[instance] = false;
  const idle = hold.restoring.size === 0;
  hold.restoring.add(instance);
  if (idle) ctx.inBackground(hold.serialize(() => restorePending(ctx, hold)));
}

async function restorePending(ctx: RedlockContext, hold: RedlockHold): Promise<void> {
  const instances = [...hold.restoring];
  hold.restoring.clear();
  // Past its deadline the hold may be gone on the majority too: nothing to put back.
  if (hold.ended || hold.deadline <= performance.now()) return;
  // Bounded like any instance call and not retried: a release queued behind
  // this must not wait on a hung instance, and the next renewal tries again.
  const policy = { commandTimeoutMs: ctx.options.instanceTimeoutMs, retries: 0 };
  await Promise.all(
    instances.map(async (i) => {
      try {
        const { keys, owner, count, token, leaseMs } = hold;
        const { status } = await callRedis(() => restoreOn(ctx, i, keys, owner, count, token, leaseMs), policy);
        hold.raised[i] = true;
        // restore-hold.lua writes a hash of its own: not take.lua's string any more.
        if (status === 'restored') {
          hold.counts[i] = count;
          hold.takenOn[i] = undefined;
        }
        else if (status === 'taken') hold.counts[i] = undefined;
      } catch (error) {
        ctx.emitError(error);
      }
    }),
  );
}
