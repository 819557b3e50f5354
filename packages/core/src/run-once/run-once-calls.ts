import type { AcquireContext } from '../engine/kind.js';
import type { ClaimEngine, RenewOutcome } from '../engine/renewed-claim.js';
import { KeyConflictError, ReplicationError } from '../errors/errors.js';
import { callRedis, type CallLimits } from '../port/redis-call.js';
import { namedKeys } from '../keys/keys.js';
import { int, malformed, ReplyCode } from '../scripts/replies.js';
import { callGranting, defineScript, runScript } from '../scripts/index.js';
import claimSource from './claim.lua';
import renewSource from './renew.lua';
import type { ResolvedClientOptions } from '../options/options.js';

/**
 * The Redis names of one run-once key, in the hash slot of its key's tag (the
 * scheme of a lock's names, see keys.ts), with a type word of its own so a
 * claim never shares a key with a lock or a semaphore of the same name:
 *
 *   <prefix>:{<tag>}:once:<key>   the claim: string `o1|<token>|<owner>`, with its expiry
 *   <prefix>:{<tag>}:fence        the slot's fencing counter, shared with locks
 *
 * The client's ioredis `keyPrefix`, when it has one, is added by the client in
 * front of both (no channel is involved, so nothing else needs it).
 */
export interface RunOnceKeys {
  /** The claim. */
  readonly claim: string;
  /** The fencing counter of the claim's slot. */
  readonly fence: string;
  /** The Redis Cluster slot both keys hash to. */
  readonly slot: number;
}

/** The names of run-once key `key` under `prefix`. */
export function runOnceKeys(prefix: string, key: string): RunOnceKeys {
  return namedKeys(prefix, key, '', { claim: 'once:', fence: 'fence' }, {});
}

/** What run-once claims need of their client's engine: a renewed claim's view, and the calls'. */
export interface RunOnceEngine extends ClaimEngine, Pick<AcquireContext, 'redis' | 'policy' | 'replication' | 'isClosed'> {
  /** The client's options (`prefix`, `leaseMs`). */
  readonly options: ResolvedClientOptions;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** The eviction check (and registration) still to be awaited before the first write, if any. */
  serverReady(): Promise<void> | undefined;
}

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
  try {
    return await callGranting(engine, runOnceScripts.claim, [keys.claim, keys.fence], [owner, ttlMs], {
      name: key,
      decode: (reply) => claimReply(reply, key),
      granted: (outcome) => outcome.won,
    });
  } catch (error) {
    // A claim a failover could lose is dropped before the error: nothing runs under it.
    if (error instanceof ReplicationError) await drop(engine, keys, owner).catch((dropError: unknown) => engine.emit('error', dropError));
    throw error;
  }
}

/**
 * Keeps `owner`'s claim for at least `ttlMs` from now (never shortening it).
 * Rejects when Redis did not answer, or (with `minReplicas`) when too few replicas acknowledged it.
 */
export function renew(engine: RunOnceEngine, key: string, keys: RunOnceKeys, owner: string, ttlMs: number, limits: CallLimits): Promise<RenewOutcome> {
  return callGranting(engine, runOnceScripts.renew, [keys.claim], [owner, ttlMs], {
    name: key,
    decode: renewReply,
    granted: (outcome) => outcome === 'ok',
    limits,
  });
}

/** Removes `owner`'s claim, if it still holds it (a claim that will not be used). */
export async function drop(engine: RunOnceEngine, keys: RunOnceKeys, owner: string): Promise<void> {
  await callRedis(() => runScript(engine.redis, runOnceScripts.renew, [keys.claim], [owner, 0]), engine.policy);
}

/** run-once-claim's reply: {1, token} this owner's claim, {0} another's, {-3} foreign data. */
function claimReply(reply: unknown, key: string): ClaimOutcome {
  // Integers may come as strings (ioredis's `stringNumbers`): int() reads both.
  const [status, token] = Array.isArray(reply) ? (reply as unknown[]).map(int) : [];
  if (status === ReplyCode.foreign) throw new KeyConflictError(key, 'run-once');
  if (status === 0) return { won: false };
  if (status !== 1 || token === undefined) throw malformed('run-once-claim', reply);
  return { won: true, token };
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
