import { scriptedKind, type AcquireContext, type LockKind } from '../engine/kind.js';
import { KeyConflictError } from '../errors/errors.js';
import type { Hold } from '../engine/hold.js';
import type { HoldBook } from '../engine/hold-book.js';
import type { ResolvedClientOptions } from '../options/options.js';
import type { Renewer } from '../options/renewal.js';
import type { LeaseEvents } from '../telemetry/events.js';
import { callRedis } from '../port/redis-call.js';
import { acquireReply, arrayOf, extendReply, intAt, malformed, type ExtendReply } from '../scripts/replies.js';
import { defineScripts, runScript } from '../scripts/index.js';
import { scripts } from '../mutex/mutex-calls.js';
import electionLua from './_election.lua';
import acquireLua from './election-acquire.lua';
import inspectLua from './election-inspect.lua';
import proclaimLua from './election-proclaim.lua';
import releaseLua from './election-release.lua';
import { scriptKeys, type ElectionKeys } from './election-keys.js';

/**
 * The election's scripts. A term is a lock hash (scripts/_lock-hash.lua) plus
 * the leader's value, so renewing and extending a term are the mutex's own
 * scripts: the watchdog renews terms in the same calls as locks.
 */
export const electionScripts = {
  ...defineScripts('election', { acquire: acquireLua, release: releaseLua, proclaim: proclaimLua, inspect: inspectLua }, { election: electionLua }),
  extend: scripts.extend,
  renew: scripts.renew,
} as const;

/**
 * What an election needs from the client it came from: the acquisition
 * context every kind shares (Redis, call policy, pub/sub waiters, hand-off
 * timing, `minReplicas`, cancel), plus the client's books that a term, like a
 * lease, is kept in (deadline timer, watchdog, close()).
 */
export interface ElectionEngine extends AcquireContext {
  /** The client's id: the start of every owner id it makes. */
  readonly clientId: string;
  /** The client's options, every default filled in (`leaseMs`: a term's default without a watchdog). */
  readonly options: ResolvedClientOptions;
  /** The client's `driftFactor`: a term is reported lost `termMs × driftFactor + 2` ms before it ends on the server. */
  readonly driftFactor: number;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /**
   * The eviction check (and registration) still to be awaited before the first write, if any;
   * `deadline` (monotonic ms) and `signal` bound this caller's wait for it (see Engine.serverReady).
   */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
  /** Emits the event with the payload `build` returns, built only when someone listens. */
  emitLazily<K extends 'acquired' | 'released' | 'lost'>(event: K, build: () => LeaseEvents[K][0]): void;
  /** The attached watchdog, if any. */
  renewer(): Renewer | undefined;
  /** Calls `listener` at the start of close(); returns a function that unregisters it. */
  onClose(listener: () => void): () => void;
  /** Counts the user client's reconnections: a change during a call means it may have been resent. */
  connectionEpoch(): number;
  /** The client's live holds, a term kept among them as a lease is (deadline timer, watchdog, loss, close()). */
  readonly holds: Pick<HoldBook<Hold>, 'add' | 'end' | 'deadlineMoved' | 'markLost' | 'sweepExpired'>;
}

/** Who leads an election: what `leader()` and `observe()` report. */
export interface Leader {
  /** What the leader published (`campaign({ value })`, `proclaim()`). */
  readonly value: string;
  /** The leader's term's epoch: its fencing token, greater than every earlier term's. */
  readonly epoch: number;
}

/** An election's state as the inspect script reads it. */
export interface ElectionState {
  /** The confirmed leader, or null while nobody leads (no term, or a hand-off not confirmed yet). */
  readonly leader: Leader | null;
  /** The remaining ms of the term (or of an unconfirmed hand-off's claim); 0 when none is held. */
  readonly remainingMs: number;
  /** Candidates waiting whose queue entry is still valid (0 unless counted). */
  readonly candidates: number;
  /**
   * Where this state stands among the election's changes, as `[epoch, revision]`,
   * ordered as the observers' messages are (see observe.ts): the leader's
   * term and revision; an unconfirmed hand-off's epoch and 0; with no term at
   * all, the slot's fencing counter and Infinity (every term issued so far is over).
   */
  readonly position: readonly [number, number];
}

/**
 * The kind of one campaign for election `keys`, publishing `value` once
 * elected: the election's scripts on the shared acquisition, hold, hand-off
 * and renewal path. Renewal and extension are the mutex's scripts (a term is
 * a lock hash with a value).
 */
export function electionKind(keys: ElectionKeys, value: string): LockKind {
  const { acquire, release, extend, renew } = electionScripts;
  return scriptedKind({
    role: 'election',
    keys: scriptKeys(keys),
    acquire,
    acquireArgs: (ctx, req, requestId, mode) => [req.owner, req.leaseMs, requestId, mode, ctx.handoffTimeoutMs, keys.channel, keys.news, value],
    decodeAcquire: (reply, req) => acquireReply(reply, req.leaseMs),
    release,
    releaseArgs: (ctx, owner, requestId) => [owner, keys.channel, ctx.handoffTimeoutMs, keys.news, requestId],
    extend,
    extendKeys: [keys.lock],
    renew,
    renewKey: keys.lock,
  });
}

/** Sets the leader's value, if `hold` still leads: the outcome as an extend's. */
export async function proclaimValue(ctx: AcquireContext, keys: ElectionKeys, hold: Hold, value: string): Promise<ExtendReply> {
  const reply = await callRedis(() => runScript(ctx.redis, electionScripts.proclaim, [keys.lock], [hold.owner, value, keys.news]), ctx.policy);
  return extendReply(reply);
}

/**
 * Reads the election's state (`candidates`: also count the waiting
 * candidates). `KeyConflictError` when the term key holds data holdfast did
 * not write.
 */
export async function inspectElection(ctx: AcquireContext, name: string, keys: ElectionKeys, candidates = false): Promise<ElectionState> {
  const reply = await callRedis(
    () => runScript(ctx.redis, electionScripts.inspect, scriptKeys(keys), [candidates ? '1' : '0']),
    ctx.policy,
  );
  return electionState(reply, name);
}

/** Decodes election-inspect's reply: {pttl, epoch, value | nil, candidates, revision, fence}. */
export function electionState(reply: unknown, name: string): ElectionState {
  const r = arrayOf('election-inspect', reply);
  if (r.length !== 6) throw malformed('election-inspect', reply);
  const [pttl, epoch, candidates, revision, fence] = [0, 1, 3, 4, 5].map((i) => intAt('election-inspect', r, i)) as [number, number, number, number, number];
  const raw: unknown = r[2];
  // An epoch of -1: the term key, or a counted candidate queue or table, holds foreign data.
  if (epoch === -1) throw new KeyConflictError(name, 'election');
  // A Lua false comes back as a nil reply: null (ioredis) or null/undefined (node-redis).
  const value = typeof raw === 'string' ? raw : Buffer.isBuffer(raw) ? raw.toString('utf8') : undefined;
  const leader = value !== undefined && epoch > 0 ? { value, epoch } : null;
  return {
    leader,
    remainingMs: Math.max(0, pttl),
    candidates,
    position: epoch > 0 ? [epoch, leader ? revision : 0] : [fence, Infinity],
  };
}
