import type { AcquireContext, LockKind } from '../engine/kind.js';
import { holdScriptKeys, queueScriptKeys, type LockKeys } from '../keys/keys.js';
import { callRedis } from '../port/redis-call.js';
import { runScript } from '../scripts/index.js';
import { forceReleaseReply, inspectReply } from '../scripts/replies.js';

/** The lock's remaining TTL and current token, whoever holds it. */
export async function inspectLock(
  ctx: AcquireContext,
  keys: LockKeys,
  kind: LockKind,
): Promise<{ pttl: number; token: number; foreign: boolean }> {
  return inspectReply(await callRedis(() => runScript(ctx.redis, kind.inspect, holdScriptKeys(keys), kind.args), ctx.policy));
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
      runScript(ctx.redis, kind.forceRelease!, queueScriptKeys(keys), [
        keys.channel,
        ctx.handoffTimeoutMs,
        ...kind.args,
      ]),
    ctx.policy,
  );
  return forceReleaseReply(reply);
}
