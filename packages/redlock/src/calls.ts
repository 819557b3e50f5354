import {
  MUTEX,
  callRedis,
  randomId,
  releaseArguments,
  replies,
  runScript,
  runScriptThen,
  scripts,
  type LockKeys,
  type Script,
} from '@holdfast/core/internal';
import type { RedlockContext } from './context.js';
import { answerOf, type AnswerSink } from './fan-out.js';
import { raiseFenceReply, redlockScripts, restoreHoldReply } from './scripts/index.js';

/**
 * One script call on one instance, unbounded: the quorum operations bound
 * waiting for the answer, never the call itself, so its late outcome can
 * still be handled.
 */

/** Grace and hand-off times the core scripts expect; 'try' mode never queues, so they only shape busy replies. */
const CLAIM_MS = 2_000;

const allKeys = (keys: LockKeys) => [keys.lock, keys.queue, keys.waiters, keys.fence];

/**
 * One script call on instance `i` whose reply, read by `decode`, goes to
 * `sink` from the call's own handler (one promise per call). A reply
 * `decode` cannot read is that instance's error.
 */
function scriptTo<R>(
  ctx: RedlockContext,
  i: number,
  script: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
  decode: (reply: unknown) => R,
  sink: AnswerSink<R>,
): Promise<void> {
  return runScriptThen(
    ctx.instances[i]!,
    script,
    keys,
    args,
    (reply) => {
      let value: R;
      try {
        value = decode(reply);
      } catch (error) {
        sink.fail(i, error);
        return;
      }
      sink.ok(i, value);
    },
    (error) => sink.fail(i, error),
  );
}

/** acquire.lua on one instance ('try', or 'reenter' for one more hold of the same owner), its reply to `sink`. */
export function acquireTo(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  leaseMs: number,
  requestId: string,
  mode: 'try' | 'reenter',
  sink: AnswerSink<replies.AcquireReply>,
): Promise<void> {
  const args = [owner, leaseMs, requestId, mode, CLAIM_MS, keys.channel];
  return scriptTo(ctx, i, scripts.acquire, allKeys(keys), args, (reply) => replies.acquireReply(reply, leaseMs), sink);
}

/** acquireTo, as a promise of the reply. */
export function acquireOn(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  leaseMs: number,
  requestId: string,
  mode: 'try' | 'reenter',
): Promise<replies.AcquireReply> {
  return answerOf((sink) => acquireTo(ctx, i, keys, owner, leaseMs, requestId, mode, sink));
}

/** Drops one hold (or, `all`, every hold) of `owner` on one instance, the reply given to `sink`. */
export function releaseTo(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  all: boolean,
  sink: AnswerSink<replies.ReleaseReply>,
): Promise<void> {
  const args = releaseArguments(owner, randomId(), keys.channel, CLAIM_MS, all);
  return scriptTo(ctx, i, scripts.release, allKeys(keys), args, replies.releaseReply, sink);
}

/** releaseTo, as a promise of the reply. */
export function releaseOn(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  all: boolean,
): Promise<replies.ReleaseReply> {
  return answerOf((sink) => releaseTo(ctx, i, keys, owner, all, sink));
}

export function extendOn(ctx: RedlockContext, i: number, keys: LockKeys, owner: string, leaseMs: number) {
  return runScript(ctx.instances[i]!, scripts.extend, [keys.lock], [owner, leaseMs]).then(replies.extendReply);
}

export function raiseOn(ctx: RedlockContext, i: number, keys: LockKeys, owner: string, token: number) {
  return runScript(ctx.instances[i]!, redlockScripts.raiseFence, [keys.fence, keys.lock], [token, owner]).then(
    raiseFenceReply,
  );
}

/** Re-creates `owner`'s hold where the lock key is absent, and raises the counter to `token` (restore-hold.lua). */
export function restoreOn(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  count: number,
  token: number,
  leaseMs: number,
) {
  return runScript(ctx.instances[i]!, redlockScripts.restoreHold, [keys.lock, keys.fence], [owner, count, token, leaseMs]).then(
    restoreHoldReply,
  );
}

export function inspectOn(ctx: RedlockContext, i: number, keys: LockKeys) {
  return runScript(ctx.instances[i]!, scripts.inspect, [keys.lock], []).then(replies.inspectReply);
}

export function forceReleaseOn(ctx: RedlockContext, i: number, keys: LockKeys): Promise<boolean> {
  return runScript(ctx.instances[i]!, scripts.forceRelease, allKeys(keys), [keys.channel, CLAIM_MS]).then(
    (reply) => replies.int(reply) === 1,
  );
}

/**
 * Drops every hold of `owner` on one instance, in the background, retried
 * like any call off the quorum path. For owners nobody will use again (a
 * failed attempt, a late grant), so it can never touch someone else's lock.
 */
export function dropOwnerInBackground(ctx: RedlockContext, i: number, keys: LockKeys, owner: string): void {
  const { commandTimeoutMs, retries } = ctx.options;
  ctx.inBackground(callRedis(() => releaseOn(ctx, i, keys, owner, true), { commandTimeoutMs, retries }));
}

/** Drops one hold of `owner` on one instance, in the background (undoing a re-entry that did not count). */
export function dropOneInBackground(ctx: RedlockContext, i: number, keys: LockKeys, owner: string): void {
  const { commandTimeoutMs } = ctx.options;
  // Not retried: a resent decrement could drop a hold twice.
  ctx.inBackground(callRedis(() => releaseOn(ctx, i, keys, owner, false), { commandTimeoutMs, retries: 0 }));
}
