import type { AcquireContext } from './acquire.js';
import type { Hold } from './hold.js';
import { randomId } from './owner.js';
import { callRedis } from './redis-call.js';
import { extendReply, releaseReply, type ExtendReply, type ReleaseReply } from './replies.js';
import { runScript, scripts } from './scripts/index.js';

/** One release call: drops one hold (or, with `all`, every hold) of the hold's owner. */
export async function releaseHold(ctx: AcquireContext, hold: Hold, options: { all: boolean }): Promise<ReleaseReply> {
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
  const reply = await callRedis(
    () => runScript(ctx.redis, scripts.extend, [hold.keys.lock], [hold.owner, leaseMs]),
    ctx.policy,
  );
  return extendReply(reply);
}
