import type { AcquireContext, LockKind } from '../engine/kind.js';
import type { LockKeys } from '../keys/keys.js';
import { callRedis } from '../port/redis-call.js';
import { runScript } from '../scripts/index.js';
import { forceReleaseReply, inspectReply } from '../scripts/replies.js';

/** The lock's remaining TTL and current token, whoever holds it. */
export async function inspectLock(
  ctx: AcquireContext,
  keys: LockKeys,
  kind: LockKind,
): Promise<{ pttl: number; token: number; foreign: boolean }> {
  return inspectReply(await callRedis(() => runScript(ctx.redis, kind.inspect, [keys.lock], kind.args), ctx.policy));
}

/**
 * Frees the lock whoever holds it and wakes the next waiter. `foreign`: the
 * key holds data holdfast did not write, and was left as it is.
 */
export async function forceReleaseLock(
  ctx: AcquireContext,
  keys: LockKeys,
  kind: LockKind,
): Promise<{ removed: boolean; foreign: boolean }> {
  const reply = await callRedis(
    () =>
      // Only a Lock force-releases, and every Lock's kind has the script.
      runScript(ctx.redis, kind.forceRelease!, [keys.lock, keys.queue, keys.waiters, keys.fence], [
        keys.channel,
        ctx.handoffTimeoutMs,
        ...kind.args,
      ]),
    ctx.policy,
  );
  return forceReleaseReply(reply);
}
