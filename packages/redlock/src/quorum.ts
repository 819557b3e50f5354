import { type LostReason } from '@holdfast/core';
import { driftMarginMs } from '@holdfast/core/internal';
import type { InstanceOutcome } from './errors.js';

/**
 * The arithmetic of Redlock, kept free of I/O so it can be tested on its own.
 */

/** Instances that must agree: a strict majority. */
export function quorumOf(instanceCount: number): number {
  return Math.floor(instanceCount / 2) + 1;
}

/**
 * Time the lease can still be relied on: the lease, minus the time since the
 * attempt was sent (the keys may have been set as early as that), minus the
 * drift margin (`leaseMs × driftFactor + 2`) for clocks running at different rates.
 */
export function validityMs(leaseMs: number, elapsedMs: number, driftFactor: number): number {
  return Math.floor(leaseMs - elapsedMs - driftMarginMs(leaseMs, driftFactor));
}

/**
 * Whether a lease with this validity may be handed out. Never at or below
 * zero; and never below `instanceTimeoutMs`: a competing attempt that started
 * before this lease was handed out counts answers for at most that long, and
 * it must not be able to collect a stale, lower fencing token from an
 * instance this lease's fencing step had not reached yet (README, Fencing).
 */
export function isUsable(validity: number, instanceTimeoutMs: number): boolean {
  return validity > 0 && validity >= instanceTimeoutMs;
}

/**
 * The token of a new lease: the largest the granting instances reported.
 * On its own this is not enough for tokens to increase (another majority can
 * have smaller counters), which is why the lease is only handed out once a
 * majority's counters have been raised to it.
 */
export function fencingToken(grantedTokens: readonly number[]): number {
  if (grantedTokens.length === 0) throw new RangeError('fencingToken() needs at least one granted token');
  return Math.max(...grantedTokens);
}

export interface Tally {
  readonly yes: number;
  readonly notHeld: number;
  readonly busy: number;
  readonly errors: number;
  readonly pending: number;
}

export function tally(outcomes: readonly InstanceOutcome[]): Tally {
  let yes = 0;
  let notHeld = 0;
  let busy = 0;
  let errors = 0;
  let pending = 0;
  for (const o of outcomes) {
    if (o.status === 'granted' || o.status === 'ok') yes++;
    else if (o.status === 'not-held') notHeld++;
    else if (o.status === 'busy') busy++;
    else if (o.status === 'error') errors++;
    else pending++;
  }
  return { yes, notHeld, busy, errors, pending };
}

/** True once a majority said yes, or once one can no longer be reached. */
export function isDecided(outcomes: readonly InstanceOutcome[], quorum: number): boolean {
  return decidedBy(tally(outcomes), quorum);
}

/** isDecided, from the outcomes' counts. */
export function decidedBy(counts: Tally, quorum: number): boolean {
  return counts.yes >= quorum || counts.yes + counts.pending < quorum;
}

/**
 * Why no majority could form because of failed calls: `error` when instances
 * answered with error replies (permissions, unknown commands: retrying will
 * not help, and the message says which), `unreachable` when too few answered.
 */
export function failedCalls(outcomes: readonly InstanceOutcome[]): 'error' | 'unreachable' {
  return outcomes.some((o) => o.status === 'error' && o.replied) ? 'error' : 'unreachable';
}

/**
 * Why an acquisition without a majority failed: `unreachable` / `error` when
 * too many calls failed to ever form one (see failedCalls), `busy` otherwise
 * (held elsewhere, or split between competing owners).
 */
export function acquireFailure(outcomes: readonly InstanceOutcome[], quorum: number): 'busy' | 'unreachable' | 'error' {
  return tally(outcomes).errors > outcomes.length - quorum ? failedCalls(outcomes) : 'busy';
}

/**
 * Verdict on an operation on a held lock (re-entry, release, extend, renewal):
 * `ok` with a majority of yes; `lost` when so many instances say the lock is
 * not ours that a majority of yes is impossible whatever the others say;
 * `unknown` otherwise (too many errors or no answers).
 */
export function holdVerdict(outcomes: readonly InstanceOutcome[], quorum: number): 'ok' | 'lost' | 'unknown' {
  return verdictBy(tally(outcomes), outcomes.length, quorum);
}

/** holdVerdict, from the counts of the outcomes of `instances` instances. */
export function verdictBy(counts: Tally, instances: number, quorum: number): 'ok' | 'lost' | 'unknown' {
  if (counts.yes >= quorum) return 'ok';
  if (counts.notHeld > instances - quorum) return 'lost';
  return 'unknown';
}

/** `taken` if any instance has another owner, `deleted` otherwise. */
export function lostReason(outcomes: readonly InstanceOutcome[]): 'deleted' | 'taken' {
  return outcomes.some((o) => o.status === 'not-held' && o.reason === 'taken') ? 'taken' : 'deleted';
}

/**
 * When a majority could be free at the earliest, in ms from now: the
 * quorum-th smallest remaining lease among the instances (0 where we were
 * granted, unknown where there was no answer). Infinity when unknown.
 */
export function retryAfterMs(outcomes: readonly InstanceOutcome[], quorum: number): number {
  const freeIn = outcomes
    .map((o) => (o.status === 'busy' ? Math.max(0, o.pttl) : o.status === 'granted' ? 0 : Infinity))
    .sort((a, b) => a - b);
  return freeIn[quorum - 1] ?? Infinity;
}

/**
 * Jittered exponential backoff: uniform in [½, 1] × base × 2^attempt, capped
 * at 32 × base. The jitter keeps competing clients from retrying in lockstep
 * and splitting the votes again.
 */
export function backoffMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const ceiling = baseMs * 2 ** Math.min(Math.max(attempt, 0), 5);
  return Math.max(1, Math.round(ceiling * (0.5 + random() / 2)));
}

/** A script's "not ours" reason, narrowed: the scripts only ever report a key gone or taken. */
export function notHeldReason(reason: LostReason): 'deleted' | 'taken' {
  return reason === 'taken' ? 'taken' : 'deleted';
}
