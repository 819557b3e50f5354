import {
  callRedis,
  randomId,
  releaseArguments,
  releaseTakenReply,
  replies,
  runScript,
  scripts,
  takeCall,
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
 * `sink`. A reply `decode` cannot read is that instance's error.
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
  return runScript(ctx.instances[i]!, script, keys, args).then(
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

/** A round's take.lua call (core's mutex's): the same for every instance, so built once per round. */
export type TakeCall = ReturnType<typeof takeCall>;

/**
 * The round a take.lua call belongs to: the sink of its answers, which keeps
 * the string lock a grant wrote, for the instances' releases.
 */
export interface TakeSink extends AnswerSink<replies.AcquireReply> {
  readonly keys: LockKeys;
  readonly owner: string;
  readonly leaseMs: number;
  readonly requestId: string;
  /** Instance `i` granted and wrote the string lock `hint` (its release hint). */
  taken(i: number, hint: string): void;
}

/**
 * A new owner's first 'try' on one instance, from a client not subscribed to
 * the lock's channel: core's take.lua, the same outcomes as acquire.lua's
 * 'try'. What take.lua leaves to acquire.lua (a resend of an applied take, a
 * holder without TTL) goes there next with the same request id. A grant's
 * release hint is reported to `take.taken`: its last release on that
 * instance can be release-taken.lua.
 */
export function takeTo(ctx: RedlockContext, i: number, call: TakeCall, take: TakeSink): Promise<void> {
  const { leaseMs } = take;
  return runScript(ctx.instances[i]!, call.script, call.keys, call.args).then(
    (reply): Promise<void> | undefined => {
      let decoded: replies.AcquireReply | undefined;
      try {
        decoded = call.decode(reply);
      } catch (error) {
        take.fail(i, error);
        return;
      }
      if (decoded === undefined) return acquireTo(ctx, i, take.keys, take.owner, leaseMs, take.requestId, 'try', take);
      if (decoded.granted && decoded.releaseHint !== undefined) take.taken(i, decoded.releaseHint);
      take.ok(i, decoded);
    },
    (error) => take.fail(i, error),
  );
}

/**
 * Drops one hold (or, `all`, every hold) of `owner` on one instance, the
 * reply given to `sink`. `taken`: the string lock
 * take.lua wrote there for this hold, so its last release tries
 * release-taken.lua with it first; that one frees the lock only while it is
 * still that string, i.e. while no waiter has found it busy (a Redlock
 * waiter's 'try' turns it into the hash before it sleeps on the channel),
 * and otherwise writes nothing and leaves it to release.lua, which publishes
 * the release to the sleepers.
 */
export function releaseTo(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  all: boolean,
  taken: string | undefined,
  sink: AnswerSink<replies.ReleaseReply>,
): Promise<void> {
  if (!all || !taken) return releaseScriptTo(ctx, i, keys, owner, all, sink);
  return runScript(ctx.instances[i]!, scripts.releaseTaken, [keys.lock], [taken]).then(
    (reply): Promise<void> | undefined => {
      let value: replies.ReleaseReply | undefined;
      try {
        value = releaseTakenReply(reply);
      } catch (error) {
        sink.fail(i, error);
        return;
      }
      if (value === undefined) return releaseScriptTo(ctx, i, keys, owner, all, sink);
      sink.ok(i, value);
    },
    (error) => sink.fail(i, error),
  );
}

/** release.lua on one instance, its reply to `sink`. */
function releaseScriptTo(
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
  taken?: string,
): Promise<replies.ReleaseReply> {
  return answerOf((sink) => releaseTo(ctx, i, keys, owner, all, taken, sink));
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
