import { callRedis, type CallLimits } from '../port/redis-call.js';
import { defineScripts, requestIdKeepMs, runScript, type Script } from '../scripts/index.js';
import { arrayOf, intAt, malformed, ReplyCode, unlessForeign } from '../scripts/replies.js';
import { PartyCountMismatchError, type BarrierBrokenError, type BarrierBrokenReason } from './barrier-errors.js';
import type { BarrierKeys } from './barrier-keys.js';
import barrier from './_barrier.lua';
import arrive from './barrier-arrive.lua';
import leave from './barrier-leave.lua';
import parties from './barrier-parties.lua';
import read from './barrier-read.lua';
import wait from './barrier-wait.lua';
import type { Renewer } from '../options/renewal.js';
import type { AcquireContext } from '../engine/kind.js';
import type { LatchEngine } from '../latch/latch-calls.js';

/** Payload of `tripped`: a barrier this client waited at tripped (once per party of this client). */
export interface TrippedEvent {
  /** The barrier's name. */
  readonly name: string;
  /** Always `barrier`. */
  readonly kind: 'barrier';
  /** The generation that tripped. */
  readonly generation: number;
  /** How long this party waited, in ms. */
  readonly waitedMs: number;
}

/** Payload of `broken`: a generation a party of this client waited in was broken. */
export interface BrokenEvent {
  /** The barrier's name. */
  readonly name: string;
  /** Always `barrier`. */
  readonly kind: 'barrier';
  /** The generation that was broken. */
  readonly generation: number;
  /** Why. */
  readonly reason: BarrierBrokenReason;
  /** True when this party broke it (it gave up, or was itself the party lost). */
  readonly byThisParty: boolean;
  /** What the other parties got. */
  readonly error: BarrierBrokenError;
}

/** The barrier's events of a `LockClient`, event → listener arguments (part of `LockClientEvents`). */
export interface BarrierEvents {
  /** A barrier a party of this client waited at tripped (`kind: 'barrier'`). */
  tripped: [event: TrippedEvent];
  /** A barrier generation a party of this client waited in was broken (`kind: 'barrier'`). */
  broken: [event: BrokenEvent];
}

/**
 * What a barrier uses of its client's engine: a latch's view (a party waits
 * as a latch's waiter does), plus what a party's lease needs.
 */
export interface BarrierEngine extends Omit<LatchEngine, 'emitLazily'>, Pick<AcquireContext, 'marginMs' | 'onError'> {
  /** The attached watchdog, if any (its `timeoutMs` is a party's default lease). */
  renewer(): Renewer | undefined;
  /** Calls `listener` at the start of the client's `close()`; returns the function that unregisters it. */
  onClose(listener: () => void): () => void;
  /** Emits `event` with the payload `build` returns, built only when someone listens; never throws. */
  emitLazily<K extends keyof BarrierEvents>(event: K, build: () => BarrierEvents[K][0]): void;
}

/** The barrier's scripts, one per operation. */
export const barrierScripts = defineScripts('barrier', { arrive, wait, leave, parties, read }, { barrier });

/** Where one arrival stands, as the script reports it. */
export type PartyStatus =
  | { readonly state: 'waiting'; readonly generation: number; readonly otherMs: number }
  | { readonly state: 'tripped'; readonly generation: number }
  | { readonly state: 'broken'; readonly generation: number; readonly reason: BarrierBrokenReason; readonly by: string }
  | { readonly state: 'unknown' };

const REASONS: readonly string[] = ['lost', 'timeout', 'aborted', 'closed'];

/** Every reply of the arrive, wait and leave scripts, decoded in one place: statuses, and the errors they mean. */
function decode(reply: unknown, name: string, expected: number): PartyStatus {
  const r = arrayOf('barrier', reply);
  const at = (i: number) => intAt('barrier', r, i);
  switch (unlessForeign(at(0), name, 'barrier')) {
    case 0:
      return { state: 'waiting', generation: at(1), otherMs: at(2) };
    case 1:
      return { state: 'tripped', generation: at(1) };
    case 2: {
      const reason = String(r[2]);
      if (!REASONS.includes(reason)) throw malformed('barrier', reply);
      return { state: 'broken', generation: at(1), reason: reason as BarrierBrokenReason, by: String(r[3] ?? '') };
    }
    case 3:
      return { state: 'unknown' };
    case ReplyCode.countMismatch:
      throw new PartyCountMismatchError(name, expected, at(1));
    default:
      throw malformed('barrier', reply);
  }
}

function run(engine: BarrierEngine, script: Script, keys: BarrierKeys, args: (string | number)[], limits?: CallLimits): Promise<unknown> {
  return callRedis(() => runScript(engine.redis, script, [keys.barrier, keys.parties, keys.records], args), engine.policy, limits);
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
  const args = [partyId, ref.keys.channel, lease.ms, parties, requestIdKeepMs(engine.options, limits.deadline), ref.ttlMs, lease.endsWithWait ? 1 : 0];
  return decode(await run(engine, barrierScripts.arrive, ref.keys, args, limits), ref.name, parties);
}

/** Renews the waiting party's lease and reports where its arrival stands. */
export async function waitCall(engine: BarrierEngine, ref: BarrierRef, partyId: string, lease: PartyLease, limits: CallLimits): Promise<PartyStatus> {
  const args = [partyId, ref.keys.channel, lease.ms, requestIdKeepMs(engine.options, limits.deadline), ref.ttlMs, lease.endsWithWait ? 1 : 0];
  return decode(await run(engine, barrierScripts.wait, ref.keys, args, limits), ref.name, 0);
}

/** The party gives up for `reason`: its generation, if it still waits, is broken. */
export async function leaveCall(engine: BarrierEngine, ref: BarrierRef, partyId: string, reason: BarrierBrokenReason, limits: CallLimits): Promise<PartyStatus> {
  return decode(await run(engine, barrierScripts.leave, ref.keys, [partyId, ref.keys.channel, reason], limits), ref.name, 0);
}

/** Stores `parties` as the count (tripping the generation if that many wait): the previous count. */
export async function setPartiesCall(engine: BarrierEngine, ref: BarrierRef, parties: number): Promise<number | undefined> {
  const reply = arrayOf('barrier', await run(engine, barrierScripts.parties, ref.keys, [ref.keys.channel, parties, ref.ttlMs]));
  if (reply.length !== 1) throw malformed('barrier', reply);
  const previous = unlessForeign(intAt('barrier', reply, 0), ref.name, 'barrier');
  return previous < 0 ? undefined : previous;
}

/** The barrier now (lost parties purged first): its stored count, generation and waiting parties. */
export async function readBarrierCall(engine: BarrierEngine, ref: BarrierRef): Promise<{ parties: number | undefined; generation: number; waiting: number }> {
  const reply = arrayOf('barrier', await run(engine, barrierScripts.read, ref.keys, [ref.keys.channel]));
  const parties = unlessForeign(intAt('barrier', reply, 0), ref.name, 'barrier');
  return { parties: parties < 0 ? undefined : parties, generation: intAt('barrier', reply, 1), waiting: intAt('barrier', reply, 2) };
}
