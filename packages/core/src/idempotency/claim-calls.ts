import { ReplicationError, type KeyConflictKind } from '../errors/errors.js';
import type { RenewOutcome, ClaimEngine } from '../engine/renewed-claim.js';
import { callRedis, type CallLimits, type CallPolicy } from '../port/redis-call.js';
import { callGranting, defineScripts, runScript, type Granting, type Script, type Replication } from '../scripts/index.js';
import { arrayOf, intAt, intOf, malformed, unlessForeign } from '../scripts/replies.js';
import type { ClaimKeys } from './claim-keys.js';
import record from './_record.lua';
import forget from './claim-forget.lua';
import read from './claim-read.lua';
import release from './claim-release.lua';
import renew from './claim-renew.lua';
import store from './claim-store.lua';
import claim from './claim.lua';
import type { Waiters } from '../engine/waiters.js';
import type { ResolvedClientOptions } from '../options/options.js';
import type { RedisPort } from '../port/index.js';

/**
 * What idempotency keys and flights use of their client's engine, named as
 * the engine names it: the port, pub/sub wake-ups, the renewed claim's needs.
 */
export interface ResultClaimEngine extends ClaimEngine {
  /** The user's Redis client, behind the port. */
  readonly redis: RedisPort;
  /** How every call is bounded and retried. */
  readonly policy: CallPolicy;
  /** Replica acknowledgements every claim, renewal and store needs (`minReplicas`), if any. */
  readonly replication: Replication | undefined;
  /** Pub/sub wake-ups, shared with every kind of the client. */
  readonly waiters: Waiters;
  /** The client's options (`prefix`, `leaseMs`). */
  readonly options: ResolvedClientOptions;
  /** The ioredis client's own `keyPrefix` ('' for none), put in front of channel names. */
  readonly keyPrefix: string;
  /** True once the client is closed. */
  isClosed(): boolean;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** The eviction check (and registration) still to be awaited before the first write, if any, bounded by `deadline` and `signal`. */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
}

/** The scripts of idempotency keys and flights, one per operation. */
export const claimScripts = defineScripts('claim', { claim, renew, store, release, read, forget }, { record });

/** Who a call's errors name: the key as the user knows it, and its kind. */
export interface ClaimTarget {
  readonly keys: ClaimKeys;
  /** The name a `KeyConflictError` carries. */
  readonly display: string;
  readonly kind: KeyConflictKind;
}

/** A stored result: a value (`d`), or a flight's error (`e`), serialized. */
export interface StoredResult {
  readonly token: number;
  readonly failed: boolean;
  readonly text: string;
}

/** What a claim call found. */
export type ClaimFound =
  | { readonly state: 'won'; readonly token: number }
  | { readonly state: 'running'; readonly token: number; readonly pttl: number }
  | ({ readonly state: 'done' } & StoredResult)
  | { readonly state: 'conflict' };

/** What `read` found: nothing, or the record as it is. */
export type RecordFound =
  | null
  | { readonly running: boolean; readonly failed: boolean; readonly token: number; readonly fingerprint: string; readonly text: string; readonly pttl: number };

function call(engine: ResultClaimEngine, script: Script, target: ClaimTarget, args: (string | number)[]): Promise<unknown> {
  return callRedis(() => runScript(engine.redis, script, [target.keys.record], args), engine.policy);
}

/** An integer reply or element; KeyConflictError for the script's foreign-data code. */
function status(reply: unknown, target: ClaimTarget): number {
  return unlessForeign(intOf('result-claim', reply), target.display, target.kind);
}

/**
 * Claims the key for `owner` for `leaseMs`, or reports who has it or what it
 * holds. `mode`: `i` (an idempotency key), `n` (a new flight), `j` (a caller
 * that joined a flight). A resend of the same owner's claim finds it its own.
 */
export async function claimCall(
  engine: ResultClaimEngine,
  target: ClaimTarget,
  owner: string,
  leaseMs: number,
  fingerprint: string,
  mode: 'i' | 'n' | 'j',
  limits: CallLimits,
): Promise<ClaimFound> {
  try {
    return await callGranting(engine, claimScripts.claim, [target.keys.record, target.keys.fence], [owner, leaseMs, fingerprint, mode], {
      name: target.display,
      decode: (reply) => claimFound(reply, target),
      granted: (found) => found.state === 'won',
      limits,
    });
  } catch (error) {
    // A claim a failover could lose is given up before anything runs under it.
    if (error instanceof ReplicationError) await releaseCall(engine, target, owner).catch((releaseError: unknown) => engine.emit('error', releaseError));
    throw error;
  }
}

/** The claim script's reply. */
function claimFound(reply: unknown, target: ClaimTarget): ClaimFound {
  const [code, token, third, fourth] = arrayOf('result-claim', reply);
  switch (status(code, target)) {
    case 1:
      return { state: 'won', token: status(token, target) };
    case 0:
      return { state: 'running', token: status(token, target), pttl: intOf('result-claim', third) };
    case 2:
      return { state: 'done', token: status(token, target), failed: String(third) === 'e', text: String(fourth ?? '') };
    case -2: // another fingerprint (claim.lua's own code)
      return { state: 'conflict' };
    default:
      throw malformed('result-claim', reply);
  }
}

/** A renew or store script's reply: 1 this owner's claim, 0 gone, -1 another's. */
function ownOutcome(reply: unknown, target: ClaimTarget): RenewOutcome {
  const outcome = status(reply, target);
  return outcome === 1 ? 'ok' : outcome === 0 ? 'gone' : 'taken';
}

/** A renewal or a store too few replicas acknowledged (with `minReplicas`) rejects with `ReplicationError`. */
function ownGranting(target: ClaimTarget, limits?: CallLimits): Granting<RenewOutcome> {
  return { name: target.display, decode: (reply) => ownOutcome(reply, target), granted: (outcome) => outcome === 'ok', limits };
}

/** Keeps `owner`'s running claim for at least `leaseMs` from now (never shortening it). */
export function renewCall(engine: ResultClaimEngine, target: ClaimTarget, owner: string, leaseMs: number, limits: CallLimits): Promise<RenewOutcome> {
  // A renewal too few replicas acknowledged counts as failed.
  return callGranting(engine, claimScripts.renew, [target.keys.record], [owner, leaseMs], ownGranting(target, limits));
}

/**
 * Stores `text` as the result of `owner`'s claim, kept `keepMs`, and wakes
 * every waiter. `ok` when stored (a resend finds it stored), else what the
 * claim became: `gone` (expired) or `taken` (another owner's). With
 * `minReplicas`, a store too few replicas acknowledged rejects with
 * `ReplicationError` (it is stored on the primary).
 */
export function storeCall(
  engine: ResultClaimEngine,
  target: ClaimTarget,
  owner: string,
  keepMs: number,
  text: string,
  failed: boolean,
): Promise<RenewOutcome> {
  // Stored on the primary; a failover before a replica had it would lose it.
  return callGranting(engine, claimScripts.store, [target.keys.record], [owner, target.keys.channel, keepMs, text, failed ? 'e' : 'd'], ownGranting(target));
}

/** Removes `owner`'s running claim (its work failed, nothing to store) and wakes every waiter to claim it. */
export async function releaseCall(engine: ResultClaimEngine, target: ClaimTarget, owner: string): Promise<void> {
  status(await call(engine, claimScripts.release, target, [owner, target.keys.channel]), target);
}

/** The record as it is now, or null. */
export async function readCall(engine: ResultClaimEngine, target: ClaimTarget): Promise<RecordFound> {
  const reply = arrayOf('result-claim', await call(engine, claimScripts.read, target, []));
  const [code, token, state, fingerprint, text] = reply;
  if (status(code, target) === 0) return null;
  return {
    running: String(state) === 'r',
    failed: String(state) === 'e',
    token: status(token, target),
    fingerprint: String(fingerprint ?? ''),
    text: String(text ?? ''),
    pttl: intAt('result-claim', reply, 5),
  };
}

/** Removes a stored result (a running claim is left alone): true when there was one. */
export async function forgetCall(engine: ResultClaimEngine, target: ClaimTarget): Promise<boolean> {
  return status(await call(engine, claimScripts.forget, target, []), target) === 1;
}
