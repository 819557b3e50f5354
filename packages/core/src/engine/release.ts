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

/**
 * What a release call came back with: the reply, and `resent` when the call
 * that decided was sent more than once (an earlier send may have been applied
 * before the one that answered: a send that timed out is not withdrawn).
 */
export interface ReleaseOutcome {
  readonly reply: ReleaseReply;
  readonly resent: boolean;
}

/**
 * One release: drops one hold (or, with `all`, every hold) of the hold's
 * owner, and returns the outcome; the caller settles the hold. A kind with
 * calls of its own releases through them; a mutex hold take.lua granted goes
 * to release-taken.lua first, which frees the lock while it is still the
 * string take.lua wrote and otherwise writes nothing (a waiter queued, a
 * second hold: the hash), and the full release script decides.
 */
export async function releaseHold(engine: AcquireContext, hold: Hold, all: boolean): Promise<ReleaseOutcome> {
  const { calls, releaseTaken } = hold.kind;
  if (calls) {
    const sends = { count: 0 };
    const reply = await calls.release(engine, hold, sends);
    return { reply, resent: sends.count > 1 };
  }
  if (all && hold.taken !== undefined && releaseTaken) {
    const value = hold.taken;
    const sends = { count: 0 };
    const reply = await callRedis(counted(sends, () => runScript(engine.redis, releaseTaken, [hold.keys.lock], [value])), engine.policy, undefined, releaseTakenReply);
    if (reply) return { reply, resent: sends.count > 1 };
    const queued = await releaseQueued(engine, hold, all);
    return { reply: queued.reply, resent: sends.count > 1 || queued.resent };
  }
  return releaseQueued(engine, hold, all);
}

/** The release through the kind's full script: the lock as acquire.lua keeps it, waiters and hand-off included. */
async function releaseQueued(engine: AcquireContext, hold: Hold, all: boolean): Promise<ReleaseOutcome> {
  const { keys } = hold;
  const scriptKeys = queueScriptKeys(keys);
  const releaseAll = all ? hold.kind.releaseAll : undefined;
  // Every send of one release carries the same arguments (a resend is recognised by its request id).
  const [script, args] = releaseAll
    ? [releaseAll, releaseAllArguments(hold.owner, keys.channel, engine.handoffTimeoutMs)]
    : [hold.kind.release, releaseArguments(hold.owner, randomId(), keys.channel, engine.handoffTimeoutMs, all)];
  const sends = { count: 0 };
  const reply = await callRedis(counted(sends, () => runScript(engine.redis, script, scriptKeys, args)), engine.policy, undefined, releaseReply);
  return { reply, resent: sends.count > 1 };
}

/** One extend call: sets the remaining lease of a lock the hold's owner holds. */
export async function extendHold(engine: AcquireContext, hold: Hold, leaseMs: number): Promise<ExtendReply> {
  if (hold.kind.calls) return hold.kind.calls.extend(engine, hold, leaseMs);
  const keys = holdScriptKeys(hold.keys);
  const args = [hold.owner, leaseMs];
  return callGranting(engine, hold.kind.extend, keys, args, {
    name: hold.name,
    decode: extendReply,
    // Extended on the primary only: the lease keeps the deadline it had.
    granted: (outcome) => outcome.ok,
  });
}
