import type { AcquireContext } from './acquire.js';
import type { Hold } from './hold.js';
import { randomId } from './owner.js';
import { callRedis } from './redis-call.js';
import { ReplicationError } from './errors.js';
import type { LockKeys } from './keys.js';
import { extendReply, forceReleaseReply, inspectReply, releaseReply, type ExtendReply, type ReleaseReply } from './replies.js';
import { runScript, runScriptReplicated, scripts } from './scripts/index.js';

/** One release call: drops one hold (or, with `all`, every hold) of the hold's owner. */
export async function releaseHold(ctx: AcquireContext, hold: Hold, options: { all: boolean }): Promise<ReleaseReply> {
  if (hold.ops) return hold.ops.release(hold);
  const { keys } = hold;
  const requestId = randomId();
  const reply = await callRedis(
    () =>
      runScript(ctx.redis, scripts.release, [keys.lock, keys.queue, keys.waiters, keys.fence], [
        hold.owner,
        requestId,
        keys.channel,
        ctx.handoffTimeoutMs,
        options.all ? '1' : '0',
      ]),
    ctx.policy,
  );
  return releaseReply(reply);
}

/** One extend call: sets the remaining lease of a lock the hold's owner holds. */
export async function extendHold(ctx: AcquireContext, hold: Hold, leaseMs: number): Promise<ExtendReply> {
  if (hold.ops) return hold.ops.extend(hold, leaseMs);
  const keys = [hold.keys.lock];
  const args = [hold.owner, leaseMs];
  const { replication } = ctx;
  if (!replication) return extendReply(await callRedis(() => runScript(ctx.redis, scripts.extend, keys, args), ctx.policy));
  const { reply, acknowledged } = await callRedis(
    () => runScriptReplicated(ctx.redis, scripts.extend, keys, args, replication),
    { ...ctx.policy, commandTimeoutMs: ctx.policy.commandTimeoutMs + replication.timeoutMs },
  );
  const outcome = extendReply(reply);
  if (outcome.ok && acknowledged < replication.replicas) {
    // Extended on the primary only: the lease keeps the deadline it had.
    throw new ReplicationError(hold.name, acknowledged, replication.replicas, replication.timeoutMs);
  }
  return outcome;
}

/** The lock's remaining TTL and current token, whoever holds it. */
export async function inspectLock(ctx: AcquireContext, keys: LockKeys): Promise<{ pttl: number; token: number; foreign: boolean }> {
  return inspectReply(await callRedis(() => runScript(ctx.redis, scripts.inspect, [keys.lock], []), ctx.policy));
}

/**
 * Frees the lock whoever holds it and wakes the next waiter. `foreign`: the
 * key holds data holdfast did not write, and was left as it is.
 */
export async function forceReleaseLock(ctx: AcquireContext, keys: LockKeys): Promise<{ removed: boolean; foreign: boolean }> {
  const reply = await callRedis(
    () =>
      runScript(ctx.redis, scripts.forceRelease, [keys.lock, keys.queue, keys.waiters, keys.fence], [
        keys.channel,
        ctx.handoffTimeoutMs,
      ]),
    ctx.policy,
  );
  return forceReleaseReply(reply);
}
