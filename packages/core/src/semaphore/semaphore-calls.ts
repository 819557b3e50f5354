import { scriptedKind, type AcquireContext, type LockKind } from '../engine/kind.js';
import { CountMismatchError } from '../errors/errors.js';
import { callRedis } from '../port/redis-call.js';
import { acquireReply, forceReleaseReply, ints, malformed, ReplyCode, type AcquireReply } from '../scripts/replies.js';
import { defineScripts, runScript } from '../scripts/index.js';
import semaphore from './_semaphore.lua';
import acquire from './semaphore-acquire.lua';
import extend from './semaphore-extend.lua';
import forceRelease from './semaphore-force-release.lua';
import inspect from './semaphore-inspect.lua';
import release from './semaphore-release.lua';
import renew from './semaphore-renew.lua';
import { scriptKeys, type SemaphoreKeys } from './semaphore-keys.js';

/** The semaphore's scripts (a hash of holders, a sorted set of their lease ends). */
export const semaphoreScripts = defineScripts('semaphore', { acquire, release, extend, renew, inspect, forceRelease }, { semaphore });

/**
 * The semaphore's permit count stored in Redis differs from the `permits`
 * this client was given: acquiring under either count could admit more
 * holders than intended, so nothing is granted. Change the count explicitly
 * with `semaphore.setPermits(n)`, or create the semaphore with the stored count.
 */
export class PermitCountMismatchError extends CountMismatchError {
  /** The semaphore's name. */
  readonly semaphoreName: string;

  constructor(semaphoreName: string, expected: number, stored: number) {
    super('ERR_PERMIT_COUNT_MISMATCH', `Semaphore \`${semaphoreName}\``, 'permits', 'setPermits', expected, stored);
    this.semaphoreName = semaphoreName;
  }
}

/**
 * The kind of one acquisition of `permits` permits of the semaphore with
 * `keys`, under the caller's permit `count`: the semaphore's scripts on the
 * shared acquisition, hold, hand-off and renewal path. One per acquisition:
 * its permits travel with it.
 */
export function permitKind(keys: SemaphoreKeys, permits: number, count: number): LockKind {
  const { acquire, release, extend, renew } = semaphoreScripts;
  return scriptedKind({
    role: 'semaphore',
    keys: scriptKeys(keys),
    acquire,
    acquireArgs: (ctx, req, requestId, mode) => [req.owner, req.leaseMs, requestId, mode, permits, count, ctx.handoffTimeoutMs, keys.channel, ctx.handoffTimeoutMs],
    decodeAcquire: (reply, req) => semaphoreAcquireReply(reply, req.name, count),
    release,
    releaseArgs: (ctx, owner, requestId) => [owner, keys.channel, ctx.handoffTimeoutMs, requestId],
    extend,
    extendKeys: [keys.lock, keys.expiry],
    renew,
    renewKey: keys.expiry,
  });
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
