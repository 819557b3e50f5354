import type { RenewOutcome } from '../engine/renewed-claim.js';
import { KeyConflictError, ReplicationError } from '../errors/errors.js';
import { callRedis, type CallLimits } from '../port/redis-call.js';
import { int, malformed, ReplyCode } from '../scripts/replies.js';
import { callScript, defineScript, runScript } from '../scripts/index.js';
import claimSource from './claim.lua';
import renewSource from './renew.lua';
import type { RunOnceEngine } from './run-once-engine.js';
import type { RunOnceKeys } from './run-once-keys.js';

/** The run-once scripts. */
export const runOnceScripts = {
  claim: defineScript('run-once-claim', claimSource),
  renew: defineScript('run-once-renew', renewSource),
} as const;

/** What a claim call found: this owner's claim (with its token), or another owner's. */
export type ClaimOutcome = { readonly won: true; readonly token: number } | { readonly won: false };

/**
 * Claims `keys` for `owner` for `ttlMs`. The same owner sent again (a resend
 * after a lost reply) finds its own claim: it won, once. `KeyConflictError`
 * when the key holds foreign data; `ReplicationError` when fewer replicas
 * than `minReplicas` acknowledged a won claim (dropped again first).
 */
export async function claim(engine: RunOnceEngine, key: string, keys: RunOnceKeys, owner: string, ttlMs: number): Promise<ClaimOutcome> {
  const { reply, acknowledged } = await callScript(engine, runOnceScripts.claim, [keys.claim, keys.fence], [owner, ttlMs]);
  // Integers may come as strings (ioredis's `stringNumbers`): int() reads both.
  const [status, token] = Array.isArray(reply) ? (reply as unknown[]).map(int) : [];
  if (status === ReplyCode.foreign) throw new KeyConflictError(key, 'run-once');
  if (status === 0) return { won: false };
  if (status !== 1 || token === undefined) throw malformed('run-once-claim', reply);
  const replication = engine.replication;
  if (acknowledged !== undefined && replication && acknowledged < replication.replicas) {
    await drop(engine, keys, owner).catch((error: unknown) => engine.emit('error', error));
    throw new ReplicationError(key, acknowledged, replication.replicas, replication.timeoutMs);
  }
  return { won: true, token };
}

/**
 * Keeps `owner`'s claim for at least `ttlMs` from now (never shortening it).
 * Rejects when Redis did not answer, or (with `minReplicas`) when too few replicas acknowledged it.
 */
export async function renew(engine: RunOnceEngine, key: string, keys: RunOnceKeys, owner: string, ttlMs: number, limits: CallLimits): Promise<RenewOutcome> {
  const { reply, acknowledged } = await callScript(engine, runOnceScripts.renew, [keys.claim], [owner, ttlMs], limits);
  const outcome = renewReply(reply);
  const replication = engine.replication;
  if (outcome === 'ok' && acknowledged !== undefined && replication && acknowledged < replication.replicas) {
    throw new ReplicationError(key, acknowledged, replication.replicas, replication.timeoutMs);
  }
  return outcome;
}

/** Removes `owner`'s claim, if it still holds it (a claim that will not be used). */
export async function drop(engine: RunOnceEngine, keys: RunOnceKeys, owner: string): Promise<void> {
  await callRedis(() => runScript(engine.redis, runOnceScripts.renew, [keys.claim], [owner, 0]), engine.policy);
}

function renewReply(reply: unknown): RenewOutcome {
  switch (int(reply)) {
    case 1:
      return 'ok';
    case 0:
      return 'gone';
    case -1: // another owner's (a claim's code: see renew.lua)
    case ReplyCode.foreign:
      // Foreign data where the claim was: someone else's, as far as this claim can tell.
      return 'taken';
    default:
      throw malformed('run-once-renew', reply);
  }
}
