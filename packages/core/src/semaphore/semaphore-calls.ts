import type { AcquireContext, AcquireRequest, HoldState, Sends } from '../engine/kind.js';
import { PermitCountMismatchError } from './semaphore-errors.js';
import type { LockKind } from '../engine/kind.js';
import { callRedis } from '../port/redis-call.js';
import { counted } from '../engine/release.js';
import { acquireReply, extendReply, forceReleaseReply, ints, malformed, releaseReply, ReplyCode, type AcquireReply } from '../scripts/replies.js';
import { callGranting, runScript } from '../scripts/index.js';
import { semaphoreScripts } from './semaphore-scripts.js';
import { scriptKeys, type SemaphoreKeys } from './semaphore-keys.js';

/** Runs semaphore-release: gives back `owner`'s permits (if it holds any) and hands them to the queue's head. */
function releaseScript(ctx: AcquireContext, keys: SemaphoreKeys, owner: string, requestId = ''): Promise<unknown> {
  return runScript(ctx.redis, semaphoreScripts.release, scriptKeys(keys), [owner, keys.channel, ctx.handoffTimeoutMs, requestId]);
}

/**
 * The kind of one acquisition of `permits` permits of the semaphore with
 * `keys`, under the caller's permit `count`: the semaphore's scripts, called
 * with their own KEYS and ARGV, on the mutex's acquisition, hold, hand-off
 * and renewal machinery. One per acquisition: its permits travel with it.
 */
export function permitKind(keys: SemaphoreKeys, permits: number, count: number): LockKind {
  const { acquire, release, extend, renew, inspect } = semaphoreScripts;
  return {
    role: 'semaphore',
    acquire,
    release,
    // The release script with a request id is the cancel (owners are never
    // reused, so giving back the owner's permits undoes exactly this request).
    cancel: release,
    extend,
    renew,
    inspect,
    args: [],
    calls: {
      // 'reenter' (the confirmation of a hand-off) is the script's 'confirm'.
      acquire: async (ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string) => {
        const args = [
          req.owner,
          req.leaseMs,
          requestId,
          mode === 'reenter' ? 'confirm' : mode,
          permits,
          count,
          ctx.handoffTimeoutMs,
          keys.channel,
          ctx.handoffTimeoutMs,
        ];
        const limits = mode === 'reenter' ? undefined : { deadline: req.deadline, signal: req.signal };
        return callGranting(ctx, acquire, scriptKeys(keys), args, {
          name: req.name,
          decode: (reply) => semaphoreAcquireReply(reply, req.name, count),
          granted: (decoded) => decoded.granted,
          limits,
        });
      },
      release: async (ctx: AcquireContext, hold: HoldState, sends: Sends) =>
        releaseReply(await callRedis(counted(sends, () => releaseScript(ctx, keys, hold.owner)), ctx.policy)),
      extend: (ctx: AcquireContext, hold: HoldState, leaseMs: number) =>
        callGranting(ctx, extend, [keys.lock, keys.expiry], [hold.owner, leaseMs], { name: hold.name, decode: extendReply, granted: (outcome) => outcome.ok }),
      cancel: (ctx: AcquireContext, owner: string, requestId: string | undefined) => releaseScript(ctx, keys, owner, requestId),
      renewKey: keys.expiry,
    },
  };
}

/**
 * Purges expired holders (handing what they freed to the queue's head) and
 * reads the count and the permits in use; with `newCount`, stores that count first.
 */
export async function inspectSemaphore(ctx: AcquireContext, keys: SemaphoreKeys, newCount?: number): Promise<SemaphoreState> {
  const args = [keys.channel, ctx.handoffTimeoutMs, newCount ?? ''];
  return semaphoreInspectReply(
    await callRedis(() => runScript(ctx.redis, semaphoreScripts.inspect, scriptKeys(keys), args), ctx.policy),
  );
}

/**
 * Takes every holder's permits back (waiters they make room for are handed
 * theirs). `foreign`: a key holds data holdfast did not write, left as it is.
 */
export async function forceReleaseSemaphore(ctx: AcquireContext, keys: SemaphoreKeys): Promise<{ removed: boolean; foreign: boolean }> {
  const args = [keys.channel, ctx.handoffTimeoutMs];
  return forceReleaseReply(
    await callRedis(() => runScript(ctx.redis, semaphoreScripts.forceRelease, scriptKeys(keys), args), ctx.policy),
  );
}

/**
 * semaphore-acquire: the mutex's acquire outcomes (a confirmation of a
 * holder that is gone is `lost: 'deleted'`), and {-4, stored}, a permit
 * count that differs from the caller's, as PermitCountMismatchError.
 */
export function semaphoreAcquireReply(reply: unknown, name: string, expected: number): AcquireReply {
  const r = ints('semaphore-acquire', reply);
  if (r[0] === ReplyCode.countMismatch && r.length === 2) throw new PermitCountMismatchError(name, expected, r[1]!);
  return acquireReply(reply);
}

/**
 * semaphore-inspect: the stored count (undefined: never used), permits in use,
 * and the count stored before the call (a `setPermits`); or foreign data.
 */
export type SemaphoreState =
  | {
      readonly foreign: false;
      readonly stored: number | undefined;
      readonly used: number;
      readonly previous: number | undefined;
    }
  | { readonly foreign: true };

export function semaphoreInspectReply(reply: unknown): SemaphoreState {
  const r = ints('semaphore-inspect', reply);
  if (r.length === 1 && r[0] === ReplyCode.foreign) return { foreign: true };
  if (r.length !== 3) throw malformed('semaphore-inspect', reply);
  const count = (n: number) => (n === -1 ? undefined : n);
  return { foreign: false, stored: count(r[0]!), used: r[1]!, previous: count(r[2]!) };
}
