import type { AcquireContext } from '../acquire.js';
import { ReplicationError } from '../errors.js';
import type { Hold, HoldOps } from '../hold.js';
import { callRedis } from '../redis-call.js';
import {
  extendReply,
  releaseReply,
  semaphoreAcquireReply,
  semaphoreInspectReply,
  type AcquireReply,
  type SemaphoreState,
} from '../replies.js';
import { runScript, runScriptReplicated, scripts, type Script } from '../scripts/index.js';
import { scriptKeys, type SemaphoreKeys } from './semaphore-keys.js';

/** One attempt of an acquisition of `permits` under the caller's `count`. */
export interface PermitRequest {
  readonly name: string;
  readonly keys: SemaphoreKeys;
  readonly owner: string;
  readonly leaseMs: number;
  readonly permits: number;
  readonly count: number;
  readonly deadline: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/**
 * A script that grants (or extends) a hold, followed by `WAIT` when the
 * client asks for replica acknowledgements (`minReplicas`), as the mutex's.
 */
async function runGranting(
  ctx: AcquireContext,
  script: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
  limits?: { deadline: number | undefined; signal: AbortSignal | undefined },
): Promise<{ reply: unknown; acknowledged: number | undefined }> {
  const { replication } = ctx;
  if (!replication) {
    return { reply: await callRedis(() => runScript(ctx.redis, script, keys, args), ctx.policy, limits), acknowledged: undefined };
  }
  const policy = { ...ctx.policy, commandTimeoutMs: ctx.policy.commandTimeoutMs + replication.timeoutMs };
  return callRedis(() => runScriptReplicated(ctx.redis, script, keys, args, replication), policy, limits);
}

/**
 * Sends one attempt of semaphore-acquire. `mode` is the acquire loop's:
 * 'reenter' (the confirmation of a hand-off) becomes the script's 'confirm'.
 */
export async function sendPermitAcquire(ctx: AcquireContext, req: PermitRequest, requestId: string, mode: string): Promise<AcquireReply> {
  const args = [
    req.owner,
    req.leaseMs,
    requestId,
    mode === 'reenter' ? 'confirm' : mode,
    req.permits,
    req.count,
    ctx.handoffTimeoutMs,
    req.keys.channel,
    ctx.handoffTimeoutMs,
  ];
  const limits = mode === 'reenter' ? undefined : { deadline: req.deadline, signal: req.signal };
  const { reply, acknowledged } = await runGranting(ctx, scripts.semaphoreAcquire, scriptKeys(req.keys), args, limits);
  const decoded = semaphoreAcquireReply(reply, req.name, req.count);
  if (decoded.granted && acknowledged !== undefined && acknowledged < ctx.replication!.replicas) {
    throw new ReplicationError(req.name, acknowledged, ctx.replication!.replicas, ctx.replication!.timeoutMs);
  }
  return decoded;
}

/** Gives back `owner`'s permits (if it holds any) and hands them to the queue's head. */
export async function releasePermits(ctx: AcquireContext, keys: SemaphoreKeys, owner: string, requestId = '') {
  const args = [owner, keys.channel, ctx.handoffTimeoutMs, requestId];
  return releaseReply(await callRedis(() => runScript(ctx.redis, scripts.semaphoreRelease, scriptKeys(keys), args), ctx.policy));
}

/**
 * Purges expired holders (handing what they freed to the queue's head) and
 * reads the count and the permits in use; with `newCount`, stores that count first.
 */
export async function inspectSemaphore(ctx: AcquireContext, keys: SemaphoreKeys, newCount?: number): Promise<SemaphoreState> {
  const args = [keys.channel, ctx.handoffTimeoutMs, newCount ?? ''];
  return semaphoreInspectReply(
    await callRedis(() => runScript(ctx.redis, scripts.semaphoreInspect, scriptKeys(keys), args), ctx.policy),
  );
}

/**
 * Removes a request's queue entry, and the holder it may have been granted
 * (a grant whose reply was lost, or a hand-off nobody will start on).
 * Owners are never reused, so giving back the owner's permits undoes exactly
 * this request. Never rejects: failures go to `ctx.onError`.
 */
export function cancelPermits(ctx: AcquireContext, keys: SemaphoreKeys, owner: string, requestId: string | undefined): Promise<void> {
  return releasePermits(ctx, keys, owner, requestId).then(
    () => undefined,
    (error: unknown) => ctx.onError(error),
  );
}

/** The Redis calls of a semaphore's holds, for the mutex's lease machinery (see HoldOps). */
export function permitOps(ctx: AcquireContext, keys: SemaphoreKeys): HoldOps {
  return {
    kind: 'semaphore',
    renewScript: scripts.semaphoreRenew,
    renewKey: keys.expiry,
    release: (hold: Hold) => releasePermits(ctx, keys, hold.owner),
    extend: async (hold: Hold, leaseMs: number) => {
      const { reply, acknowledged } = await runGranting(ctx, scripts.semaphoreExtend, [keys.lock, keys.expiry], [hold.owner, leaseMs]);
      const outcome = extendReply(reply);
      if (outcome.ok && acknowledged !== undefined && acknowledged < ctx.replication!.replicas) {
        throw new ReplicationError(hold.name, acknowledged, ctx.replication!.replicas, ctx.replication!.timeoutMs);
      }
      return outcome;
    },
    cancel: (hold: Hold) => cancelPermits(ctx, keys, hold.owner, undefined),
  };
}
