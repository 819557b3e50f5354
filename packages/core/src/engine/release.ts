import { holdScriptKeys, queueScriptKeys } from '../keys/keys.js';
import type { AcquireContext, Sends } from './kind.js';
import type { Hold } from './hold.js';
import { randomId } from './owner.js';
import { callRedis } from '../port/redis-call.js';
import { extendReply, releaseReply, releaseTakenReply, type ExtendReply, type ReleaseReply } from '../scripts/replies.js';
import { callGranting, runScript } from '../scripts/index.js';

/**
 * The release script's ARGV. The last release (every hold at once) is the common
 * one and sends no 5th argument: Redis 7.0 builds ARGV element by element from an
 * empty Lua table, which grows (rehashes) at the 1st, 2nd, 3rd and 5th element, so
 * 4 arguments save the server one growth and one string, and the client the
 * encoding of one argument (some 3,000 instructions under ioredis), per release.
 */
export function releaseArguments(owner: string, requestId: string, channel: string, claimMs: number, all: boolean): (string | number)[] {
  return all ? [owner, requestId, channel, claimMs] : [owner, requestId, channel, claimMs, '0'];
}

/**
 * release-all.lua's ARGV: the owner, and what only a hand-off reads (the claim
 * and the channel) packed in one element, split by the script when it hands
 * the lock on. No request id: the last release records none.
 */
export function releaseAllArguments(owner: string, channel: string, claimMs: number): string[] {
  return [owner, `${claimMs}|${channel}`];
}

/** `send`, counted in `sends` each time it runs (callRedis runs it again after a timeout). */
export function counted<T>(sends: Sends, send: () => Promise<T>): () => Promise<T> {
  return () => {
    sends.count++;
    return send();
  };
}

/** One release call: drops one hold (or, with `all`, every hold) of the hold's owner. */
export function releaseHold(ctx: AcquireContext, hold: Hold, options: { all: boolean; sends?: Sends }): Promise<ReleaseReply> {
  return releaseAnd(ctx, hold, options.all, options.sends ?? { count: 0 }, asIs, rethrow);
}

const asIs = <T>(value: T): T => value;
const rethrow = (error: unknown): never => {
  throw error;
};

/**
 * The release call, its reply handed to `finish` (or its failure to
 * `failed`) in the then() that reads it: lease-ops.ts settles the hold there,
 * one promise and one turn fewer than a then() on the call's own result.
 * What `finish` throws rejects the result as it is, never through `failed`.
 */
export function releaseAnd<T>(
  ctx: AcquireContext,
  hold: Hold,
  all: boolean,
  sends: Sends,
  finish: (reply: ReleaseReply) => T,
  failed: (error: unknown) => never,
): Promise<T> {
  // Not async: every release runs through here, and the common one is a
  // single call (releaseTaken) whose reply needs one then(), not a function
  // resumed after an await.
  try {
    if (hold.kind.calls) return hold.kind.calls.release(ctx, hold, sends).then(finish, failed);
    const { keys, taken: value } = hold;
    const { releaseTaken } = hold.kind;
    if (all && value !== undefined && releaseTaken) {
      // Taken free: most likely nobody queued since (the lock is still the string take.lua wrote, hold.taken).
      // One send that found waiters wrote nothing, and is not counted (a later
      // 'deleted' is not our resend).
      const before = sends.count;
      return callRedis(
        counted(sends, () => runScript(ctx.redis, releaseTaken, [keys.lock], [value])),
        ctx.policy,
        undefined,
        releaseTakenReply,
      ).then((taken) => {
        if (taken) return finish(taken);
        if (sends.count === before + 1) sends.count = before;
        return releaseQueued(ctx, hold, all, sends).then(finish, failed);
      }, failed);
    }
    return releaseQueued(ctx, hold, all, sends).then(finish, failed);
  } catch (error) {
    return Promise.reject(error).catch(failed);
  }
}

/** The release through the kind's full script: the lock as acquire.lua keeps it, waiters and hand-off included. */
function releaseQueued(ctx: AcquireContext, hold: Hold, all: boolean, sends: Sends): Promise<ReleaseReply> {
  const { keys } = hold;
  const scriptKeys = queueScriptKeys(keys);
  const releaseAll = all ? hold.kind.releaseAll : undefined;
  // Every send of one release carries the same arguments (a resend is recognised by its request id).
  const [script, args] = releaseAll
    ? [releaseAll, releaseAllArguments(hold.owner, keys.channel, ctx.handoffTimeoutMs)]
    : [hold.kind.release, releaseArguments(hold.owner, randomId(), keys.channel, ctx.handoffTimeoutMs, all)];
  return callRedis(counted(sends, () => runScript(ctx.redis, script, scriptKeys, args)), ctx.policy, undefined, releaseReply);
}

/** One extend call: sets the remaining lease of a lock the hold's owner holds. */
export function extendHold(ctx: AcquireContext, hold: Hold, leaseMs: number): Promise<ExtendReply> {
  if (hold.kind.calls) return hold.kind.calls.extend(ctx, hold, leaseMs);
  const keys = holdScriptKeys(hold.keys);
  const args = [hold.owner, leaseMs];
  return callGranting(ctx, hold.kind.extend, keys, args, {
    name: hold.name,
    decode: extendReply,
    // Extended on the primary only: the lease keeps the deadline it had.
    granted: (outcome) => outcome.ok,
  });
}
