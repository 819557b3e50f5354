import { counted, type AcquireContext, type AcquireRequest, type HoldState, type KindCalls, type LockKind, type Sends } from '../engine/kind.js';
import { randomId } from '../engine/owner.js';
import { holdScriptKeys, queueScriptKeys, type LockKeys } from '../keys/keys.js';
import { callRedis } from '../port/redis-call.js';
import { callGranting, defineScript, runScript, type Script } from '../scripts/index.js';
import { acquireReply, extendReply, forceReleaseReply, inspectReply, int, malformed, releaseReply, type AcquireReply, type ReleaseReply } from '../scripts/replies.js';
import lockstate from './_lock-state.lua';
import takenlock from './_taken-lock.lua';
import acquire from './acquire.lua';
import cancel from './cancel.lua';
import extend from './extend.lua';
import forceRelease from './force-release.lua';
import inspect from './inspect.lua';
import release from './release.lua';
import releaseAll from './release-all.lua';
import releaseTaken from './release-taken.lua';
import renew from './renew.lua';
import take from './take.lua';
import { takenPrefix } from './taken-lock.js';

/**
 * The mutex lock's layout (take.lua's string and the hash, `lockstate`), known here only: the
 * fragments of the mutex's scripts, and of multi-lock's and Redlock's, which work on mutex locks.
 */
export const lockFragments: Readonly<Record<string, string>> = { lockstate, takenlock };

/**
 * The reentrant mutex's scripts (`client.lock(name)`); Redlock runs the same ones on every instance
 * (release-taken.lua is Redlock's: its waiters never queue, so its last release that finds the hash
 * goes to release.lua, which publishes).
 */
export const scripts = {
  acquire: defineScript('acquire', acquire, lockFragments),
  release: defineScript('release', release, lockFragments),
  take: defineScript('take', take, lockFragments),
  releaseAll: defineScript('release-all', releaseAll, lockFragments),
  releaseTaken: defineScript('release-taken', releaseTaken, lockFragments),
  cancel: defineScript('cancel', cancel, lockFragments),
  extend: defineScript('extend', extend, lockFragments),
  forceRelease: defineScript('force-release', forceRelease, lockFragments),
  renew: defineScript('renew', renew, lockFragments),
  inspect: defineScript('inspect', inspect, lockFragments),
} as const;

/** The scripts of a `Lock`'s kind: the mutex's, or a side of a read-write lock's. */
export type LockScripts = Pick<typeof scripts, 'acquire' | 'release' | 'cancel' | 'extend' | 'renew' | 'inspect' | 'forceRelease'>;

/** The kind of a `Lock`: its scripts, called with the lock's KEYS, and the ARGV that name a side of a read-write lock. */
export interface LockSideKind extends LockKind {
  readonly scripts: LockScripts;
  /** ARGV appended to acquire, inspect and force-release calls (none for the mutex). */
  readonly args: readonly string[];
}

/** A kind served by lock scripts (a side of a read-write lock; the mutex adds its first 'try' and last release). */
export function lockKind(role: LockKind['role'], s: LockScripts, args: readonly string[]): LockSideKind {
  return { role, renew: s.renew, scripts: s, args, calls: lockCalls(s, args) };
}

function lockCalls(s: LockScripts, kindArgs: readonly string[]): KindCalls {
  return {
    acquire: (ctx, req, requestId, mode) => {
      const args: (string | number)[] = [req.owner, req.leaseMs, requestId, mode, ctx.handoffTimeoutMs, req.keys.channel];
      if (kindArgs.length > 0) args.push(...kindArgs, ...(req.via === undefined ? [] : [req.via]));
      return granting(ctx, req, s.acquire, queueScriptKeys(req.keys), args, (reply) => acquireReply(reply, req.leaseMs));
    },
    release: (ctx, hold, all, sends) => {
      // Every send of one release carries the same arguments (a resend is recognised by its request id).
      const args = releaseArguments(hold.owner, randomId(), hold.keys.channel, ctx.handoffTimeoutMs, all);
      return callRedis(counted(sends, () => runScript(ctx.redis, s.release, queueScriptKeys(hold.keys), args)), ctx.policy, undefined, releaseReply);
    },
    extend: (ctx, hold, leaseMs) =>
      callGranting(ctx, s.extend, holdScriptKeys(hold.keys), [hold.owner, leaseMs], {
        name: hold.name,
        decode: extendReply,
        // Extended on the primary only: the lease keeps the deadline it had.
        granted: (outcome) => outcome.ok,
      }),
    cancel: (ctx, keys, owner, requestId) =>
      requestId === undefined
        ? runScript(ctx.redis, s.release, queueScriptKeys(keys), [owner, randomId(), keys.channel, ctx.handoffTimeoutMs, '1'])
        : runScript(ctx.redis, s.cancel, queueScriptKeys(keys), [owner, requestId, keys.channel, ctx.handoffTimeoutMs]),
    renewKeys: (hold, into) => {
      into.push(hold.keys.lock);
      if (hold.keys.expiry !== undefined) into.push(hold.keys.expiry);
    },
  };
}

/** An acquire call under the caller's limits; a grant short of `minReplicas` is a ReplicationError. */
function granting<T extends AcquireReply | undefined>(
  ctx: AcquireContext,
  req: AcquireRequest,
  script: Script,
  keys: string[],
  args: (string | number)[],
  decode: (reply: unknown) => T,
): Promise<T> {
  const limits = req.deadline === undefined && req.signal === undefined ? undefined : { deadline: req.deadline, signal: req.signal };
  return callGranting(ctx, script, keys, args, { name: req.name, decode, granted: (decoded) => decoded?.granted === true, limits });
}

const queued = lockCalls(scripts, []);

/**
 * The reentrant mutex (`client.lock(name)`). A new owner's 'try' goes as
 * take.lua first (see `takeCall`): what it leaves undecided goes to
 * acquire.lua next. The last release is release-all.lua (`releaseLast`).
 */
export const MUTEX: LockSideKind = {
  role: 'lock',
  renew: scripts.renew,
  scripts,
  args: [],
  calls: {
    ...queued,
    acquire: (ctx, req, requestId, mode) => {
      if (mode !== 'try') return queued.acquire(ctx, req, requestId, mode);
      const call = takeCall(req.keys, req.owner, requestId, req.leaseMs);
      return granting(ctx, req, call.script, call.keys, call.args, call.decode).then((reply) => reply ?? queued.acquire(ctx, req, requestId, mode));
    },
    release: (ctx, hold, all, sends) => (all ? releaseLast(ctx, hold, sends) : queued.release(ctx, hold, false, sends)),
  },
};

/**
 * The mutex's last release (every hold of the owner): release-all.lua, in one
 * call whichever layout the lock has by now. A hold take.lua granted sends the
 * string it wrote, which frees the lock in one GET while it is still that string.
 */
function releaseLast(ctx: AcquireContext, hold: HoldState, sends: Sends): Promise<ReleaseReply> {
  const { keys, owner, releaseHint } = hold;
  const args = [owner, `${ctx.handoffTimeoutMs}|${keys.channel}`];
  if (releaseHint !== undefined) args.push(releaseHint);
  return callRedis(counted(sends, () => runScript(ctx.redis, scripts.releaseAll, queueScriptKeys(keys), args)), ctx.policy, undefined, releaseReply);
}

/**
 * release.lua's ARGV. The last release (every hold at once) sends no 5th
 * argument, which the script reads as 'every hold'.
 */
export function releaseArguments(owner: string, requestId: string, channel: string, claimMs: number, all: boolean): (string | number)[] {
  return all ? [owner, requestId, channel, claimMs] : [owner, requestId, channel, claimMs, '0'];
}

/**
 * take.lua's call for a new owner's 'try' (core's, and Redlock's first round
 * on each instance): the lock, queue and fencing keys, the string lock but
 * its token, the lease; and the decoder of its reply, whose grant carries the
 * string lock it wrote as the release hint (for release-all.lua; Redlock's
 * release-taken.lua).
 */
export function takeCall(keys: LockKeys, owner: string, requestId: string, leaseMs: number) {
  const prefix = takenPrefix(owner, requestId);
  return {
    script: scripts.take,
    keys: [keys.lock, keys.queue, keys.fence],
    args: [prefix, leaseMs] as (string | number)[],
    decode: (reply: unknown) => takeReply(reply, prefix, leaseMs),
  };
}

/**
 * take.lua: acquire.lua's outcomes for a new owner's 'try' (a token, busy,
 * foreign data), or undefined for its nil: acquire.lua decides (a resend, a
 * hand-off to a queued waiter, a holder without TTL), nothing written.
 */
function takeReply(reply: unknown, prefix: string, leaseMs: number): AcquireReply | undefined {
  if (reply === null || reply === undefined) return undefined;
  if (Array.isArray(reply)) return acquireReply(reply, leaseMs);
  const token = int(reply);
  if (token === undefined || token < 1) throw malformed('take', reply);
  return { granted: true, token, holdCount: 1, pttl: leaseMs, releaseHint: prefix + token };
}

/**
 * release-taken.lua: release.lua's outcomes, or undefined for its nil (the
 * lock is a hash, nothing written: release-all.lua decides).
 */
export function releaseTakenReply(reply: unknown): ReleaseReply | undefined {
  if (reply === null || reply === undefined) return undefined;
  return releaseReply(reply);
}

/** The lock's remaining TTL and current token, whoever holds it. */
export async function inspectLock(ctx: AcquireContext, keys: LockKeys, kind: LockSideKind): Promise<{ pttl: number; token: number; foreign: boolean }> {
  return inspectReply(await callRedis(() => runScript(ctx.redis, kind.scripts.inspect, holdScriptKeys(keys), kind.args), ctx.policy));
}

/**
 * Frees the lock whoever holds it and wakes the next waiter. `foreign`: the
 * key holds data holdfast did not write, and was left as it is.
 */
export async function forceReleaseLock(ctx: AcquireContext, keys: LockKeys, kind: LockSideKind): Promise<{ removed: boolean; foreign: boolean }> {
  const args = [keys.channel, ctx.handoffTimeoutMs, ...kind.args];
  return forceReleaseReply(await callRedis(() => runScript(ctx.redis, kind.scripts.forceRelease, queueScriptKeys(keys), args), ctx.policy));
}
