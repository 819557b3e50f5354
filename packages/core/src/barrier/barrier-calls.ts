import { KeyConflictError, RedisCommandError } from '../errors/errors.js';
import { keepMs } from '../latch/latch-calls.js';
import type { BarrierEngine } from './barrier-engine.js';
import { callRedis, type CallLimits } from '../port/redis-call.js';
import { defineScript, runScript } from '../scripts/index.js';
import { PartyCountMismatchError, type BarrierBrokenReason } from '../errors/barrier-errors.js';
import type { BarrierKeys } from './barrier-keys.js';
import source from './barrier.lua';

/** The barrier's one script (operations `arrive`, `wait`, `leave`, `parties`, `read`). */
export const barrierScript = defineScript('barrier', source);

/** Where one arrival stands, as the script reports it. */
export type PartyStatus =
  | { readonly state: 'waiting'; readonly generation: number; readonly otherMs: number }
  | { readonly state: 'tripped'; readonly generation: number }
  | { readonly state: 'broken'; readonly generation: number; readonly reason: BarrierBrokenReason; readonly by: string }
  | { readonly state: 'unknown' };

const REASONS: readonly string[] = ['lost', 'timeout', 'aborted', 'closed'];

/** A reply that is not what the script returns: a bug or a foreign server, never data to trust. */
function unexpected(reply: unknown): never {
  throw new RedisCommandError(`Unexpected reply from the barrier script: ${JSON.stringify(reply)?.slice(0, 100)}`);
}

function int(value: unknown, reply: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) unexpected(reply);
  return n;
}

/** Every reply of the script, decoded in one place: statuses, and the errors they mean. */
function decode(reply: unknown, name: string, expected: number): PartyStatus {
  if (!Array.isArray(reply) || reply.length === 0) unexpected(reply);
  const code = int(reply[0], reply);
  switch (code) {
    case 0:
      return { state: 'waiting', generation: int(reply[1], reply), otherMs: int(reply[2], reply) };
    case 1:
      return { state: 'tripped', generation: int(reply[1], reply) };
    case 2: {
      const reason = String(reply[2]);
      if (!REASONS.includes(reason)) unexpected(reply);
      return { state: 'broken', generation: int(reply[1], reply), reason: reason as BarrierBrokenReason, by: String(reply[3] ?? '') };
    }
    case 3:
      return { state: 'unknown' };
    case -3:
      throw new KeyConflictError(name, 'barrier');
    case -4:
      throw new PartyCountMismatchError(name, expected, int(reply[1], reply));
    default:
      return unexpected(reply);
  }
}

function run(engine: BarrierEngine, keys: BarrierKeys, args: (string | number)[], limits?: CallLimits): Promise<unknown> {
  return callRedis(() => runScript(engine.redis, barrierScript, [keys.barrier, keys.parties, keys.records], args), engine.policy, limits);
}

/** What one barrier call needs to name its barrier. */
export interface BarrierRef {
  readonly name: string;
  readonly keys: BarrierKeys;
  /** How long its keys stay after an arrival, a renewal or a count (never less than its arrivals need). */
  readonly ttlMs: number;
}

/**
 * The lease one arrival or renewal asks for: `ms`, and whether it ends when
 * the party's wait does (found ended, the party timed out rather than was lost).
 */
export interface PartyLease {
  readonly ms: number;
  readonly endsWithWait: boolean;
}

/** Arrives as `partyId` (one per arrival, kept by its resends) under the caller's party count. */
export async function arriveCall(
  engine: BarrierEngine,
  ref: BarrierRef,
  partyId: string,
  lease: PartyLease,
  parties: number,
  limits: CallLimits,
): Promise<PartyStatus> {
  const args = ['arrive', partyId, ref.keys.channel, lease.ms, parties, keepMs(engine, limits.deadline), ref.ttlMs, lease.endsWithWait ? 1 : 0];
  return decode(await run(engine, ref.keys, args, limits), ref.name, parties);
}

/** Renews the waiting party's lease and reports where its arrival stands. */
export async function waitCall(engine: BarrierEngine, ref: BarrierRef, partyId: string, lease: PartyLease, limits: CallLimits): Promise<PartyStatus> {
  const args = ['wait', partyId, ref.keys.channel, lease.ms, 0, keepMs(engine, limits.deadline), ref.ttlMs, lease.endsWithWait ? 1 : 0];
  return decode(await run(engine, ref.keys, args, limits), ref.name, 0);
}

/** The party gives up for `reason`: its generation, if it still waits, is broken. */
export async function leaveCall(engine: BarrierEngine, ref: BarrierRef, partyId: string, reason: BarrierBrokenReason, limits: CallLimits): Promise<PartyStatus> {
  return decode(await run(engine, ref.keys, ['leave', partyId, ref.keys.channel, reason], limits), ref.name, 0);
}

/** Stores `parties` as the count (tripping the generation if that many wait): the previous count. */
export async function setPartiesCall(engine: BarrierEngine, ref: BarrierRef, parties: number): Promise<number | undefined> {
  const reply = await run(engine, ref.keys, ['parties', '', ref.keys.channel, parties, 0, 0, ref.ttlMs]);
  if (!Array.isArray(reply) || reply.length !== 1) unexpected(reply);
  const previous = int(reply[0], reply);
  if (previous === -3) throw new KeyConflictError(ref.name, 'barrier');
  return previous < 0 ? undefined : previous;
}

/** The barrier now (lost parties purged first): its stored count, generation and waiting parties. */
export async function readBarrierCall(engine: BarrierEngine, ref: BarrierRef): Promise<{ parties: number | undefined; generation: number; waiting: number }> {
  const reply = await run(engine, ref.keys, ['read', '', ref.keys.channel]);
  if (!Array.isArray(reply) || reply.length === 0) unexpected(reply);
  const parties = int(reply[0], reply);
  if (parties === -3) throw new KeyConflictError(ref.name, 'barrier');
  return { parties: parties < 0 ? undefined : parties, generation: int(reply[1], reply), waiting: int(reply[2], reply) };
}
