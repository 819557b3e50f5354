import { HoldfastError, RedisTimeoutError } from '@holdfast/core';

/** What one instance answered (or did not) in one quorum call. */
export type InstanceOutcome =
  /** The instance granted the lock (or the re-entry) and reported this token. */
  | { readonly instance: number; readonly status: 'granted'; readonly token: number }
  /** Another owner holds the lock there for `pttl` more ms. */
  | { readonly instance: number; readonly status: 'busy'; readonly pttl: number }
  /** Release, extend, renewal or fencing applied there. */
  | { readonly instance: number; readonly status: 'ok' }
  /** This owner no longer holds the lock there: the key is gone, or another owner has it. */
  | { readonly instance: number; readonly status: 'not-held'; readonly reason: 'deleted' | 'taken' }
  /** The call failed; `timedOut` when no answer came within `instanceTimeoutMs` (a slow or hung instance). */
  | { readonly instance: number; readonly status: 'error'; readonly error: unknown; readonly timedOut: boolean }
  /** No answer yet when the outcome was already decided by the others. */
  | { readonly instance: number; readonly status: 'pending' };

export type QuorumOperation =
  | 'acquire'
  | 'fence'
  | 'reenter'
  | 'release'
  | 'extend'
  | 'renew'
  | 'inspect'
  | 'force-release';

/**
 * Why a quorum call failed:
 * - `busy`: enough instances answered, but other owners hold the lock on too many of them;
 * - `unreachable`: too few instances answered in time to form a majority;
 * - `too-slow`: a majority granted, but so late that too little validity was left;
 * - `not-held`: a majority no longer holds this owner's lock.
 */
export type QuorumFailure = 'busy' | 'unreachable' | 'too-slow' | 'not-held';

export interface QuorumErrorDetails {
  readonly lockName: string;
  readonly operation: QuorumOperation;
  readonly reason: QuorumFailure;
  readonly quorum: number;
  readonly outcomes: readonly InstanceOutcome[];
  /** For `too-slow`: the validity that was left, in ms. */
  readonly validityMs?: number;
}

/** A Redlock operation did not get the majority (`quorum`) of instances it needs. */
export class QuorumError extends HoldfastError {
  readonly lockName: string;
  readonly operation: QuorumOperation;
  readonly reason: QuorumFailure;
  /** Instances needed: floor(N / 2) + 1. */
  readonly quorum: number;
  /** One entry per instance, in the order the instances were given. */
  readonly outcomes: readonly InstanceOutcome[];
  readonly validityMs: number | undefined;

  constructor(details: QuorumErrorDetails, options?: { cause?: unknown }) {
    super('ERR_QUORUM', describe(details), options);
    this.lockName = details.lockName;
    this.operation = details.operation;
    this.reason = details.reason;
    this.quorum = details.quorum;
    this.outcomes = details.outcomes;
    this.validityMs = details.validityMs;
  }

  /** Outcomes with this status. */
  count(status: InstanceOutcome['status']): number {
    return this.outcomes.filter((o) => o.status === status).length;
  }
}

function describe(d: QuorumErrorDetails): string {
  const counts = new Map<string, number>();
  for (const o of d.outcomes) {
    const key = o.status === 'error' && o.timedOut ? 'timed out' : o.status;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const summary = [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
  const slow = d.validityMs === undefined ? '' : `, ${d.validityMs} ms validity left`;
  return (
    `Lock \`${d.lockName}\`: ${d.operation} needs ${d.quorum} of ${d.outcomes.length} instances ` +
    `and failed (${d.reason}${slow}): ${summary}`
  );
}

/** An instance call that failed, as an outcome. */
export function errorOutcome(instance: number, error: unknown): InstanceOutcome {
  return { instance, status: 'error', error, timedOut: error instanceof RedisTimeoutError };
}
