import { MUTEX, callRedis, randomId, releaseArguments, replies, runScript, scripts, takeCall, type LockKeys } from '@holdfast/core/internal';
import type { RedlockContext } from './context.js';
import { raiseFenceReply, redlockScripts, restoreHoldReply } from './scripts/index.js';

/**
 * One script call on one instance, unbounded: the quorum operations bound
 * waiting for the answer, never the call itself, so its late outcome can
 * still be handled.
 */

/** Grace and hand-off times the core scripts expect; 'try' mode never queues, so they only shape busy replies. */
const CLAIM_MS = 2_000;

const allKeys = (keys: LockKeys) => [keys.lock, keys.queue, keys.waiters, keys.fence];

export function acquireOn(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  leaseMs: number,
  requestId: string,
  mode: 'try' | 'reenter',
): Promise<replies.AcquireReply> {
  const args = [owner, leaseMs, requestId, mode, CLAIM_MS, keys.channel];
  return runScript(ctx.instances[i]!, scripts.acquire, allKeys(keys), args).then((reply) => replies.acquireReply(reply, leaseMs));
}

/**
 * A new owner's first 'try' on one instance, from a client not subscribed to
 * the lock's channel: core's take.lua (lock, queue and fencing keys, the owner
 * and the token's field; the lease only when it is not the Redlock's own,
 * which a copy of the script carries), the same outcomes as acquire.lua's
 * 'try'. What take.lua leaves to acquire.lua (a resend of an applied take, a
 * holder without TTL) goes there next with the same request id. A grant
 * comes back `taken` (and is told to `onTaken` with its token): its last
 * release on that instance can be release-taken.lua.
 */
export function takeOn(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  leaseMs: number,
  requestId: string,
  onTaken: (token: number) => void,
): Promise<replies.AcquireReply> {
  // Redlock runs the mutex's scripts; its own lease is the one a script copy may carry.
  const take = takeCall(MUTEX, keys, owner, requestId, leaseMs, leaseMs === ctx.options.leaseMs)!;
  // `onTaken` in the same handler: one promise per instance less than a then() of the caller's.
  return runScript(ctx.instances[i]!, take.script, take.keys, take.args).then((reply) => {
    const decoded = replies.takeReply(reply, leaseMs);
    if (decoded === undefined) return acquireOn(ctx, i, keys, owner, leaseMs, requestId, 'try');
    if (decoded.granted && decoded.taken) onTaken(decoded.token);
    return decoded;
  });
}

/**
 * Drops one hold (or, `all`, every hold) of `owner` on one instance.
 * `taken`: the string lock take.lua wrote there for this hold, so its last
 * release tries release-taken.lua with it first; that one frees the lock
 * only while it is still that string, i.e. while no waiter has found it busy
 * (a Redlock waiter's 'try' turns it into the hash before it sleeps on the
 * channel), and otherwise writes nothing and leaves it to release.lua, which
 * publishes the release to the sleepers.
 */
export function releaseOn(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  all: boolean,
  taken?: string,
): Promise<replies.ReleaseReply> {
  return releaseThen(ctx, i, keys, owner, all, taken, (reply) => reply);
}

/** releaseOn, with `then` applied to the reply in the call's own handler (no promise of its own). */
export function releaseThen<T>(
  ctx: RedlockContext,
  i: number,
  keys: LockKeys,
  owner: string,
  all: boolean,
  taken: string | undefined,
  then: (reply: replies.ReleaseReply) => T,
): Promise<T> {
  const port = ctx.instances[i]!;
  const release = () =>
    runScript(port, scripts.release, allKeys(keys), releaseArguments(owner, randomId(), keys.channel, CLAIM_MS, all)).then((reply) =>
      then(replies.releaseReply(reply)),
    );
  if (!all || !taken) return release();
  return runScript(port, scripts.releaseTaken, [keys.lock], [taken]).then((reply) => {
    const decoded = replies.releaseTakenReply(reply);
    return decoded === undefined ? release() : then(decoded);
  });
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
