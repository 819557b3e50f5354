import { HoldfastError, RedisTimeoutError } from '@holdfast/core';
import { isServerReply } from '@holdfast/core/internal';

/** What one instance answered (or did not) in one quorum call. */
export type InstanceOutcome =
  | {
      /** The instance's index, in the order the instances were given. */
      readonly instance: number;
      /** The instance granted the lock (or the re-entry) and reported `token`. */
      readonly status: 'granted';
      /** The fencing token it reported. */
      readonly token: number;
    }
  | {
      /** The instance's index, in the order the instances were given. */
      readonly instance: number;
      /** Another owner holds the lock there for `pttl` more ms. */
      readonly status: 'busy';
      /** The other owner's remaining lease there, in ms. */
      readonly pttl: number;
    }
  | {
      /** The instance's index, in the order the instances were given. */
      readonly instance: number;
      /** Release, extend, renewal or fencing applied there. */
      readonly status: 'ok';
    }
  | {
      /** The instance's index, in the order the instances were given. */
      readonly instance: number;
      /** This owner no longer holds the lock there: the key is gone, or another owner has it. */
      readonly status: 'not-held';
      /** Which of the two. */
      readonly reason: 'deleted' | 'taken';
    }
  | {
      /** The instance's index, in the order the instances were given. */
      readonly instance: number;
      /** The call failed. */
      readonly status: 'error';
      /** What it failed with. */
      readonly error: unknown;
      /** No answer came within `instanceTimeoutMs` (a slow or hung instance). */
      readonly timedOut: boolean;
      /** The instance did answer, with an error (a missing permission, an unknown command, data holdfast did not write). */
      readonly replied: boolean;
    }
  | {
      /** The instance's index, in the order the instances were given. */
      readonly instance: number;
      /** No answer yet when the outcome was already decided by the others. */
      readonly status: 'pending';
    };

/** The Redlock operation a `QuorumError` comes from. */
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
 * - `error`: instances answered, but with errors (a missing ACL permission, an
 *   unknown or renamed command…), so no majority can form; the message quotes them;
 * - `too-slow`: a majority granted, but so late that too little validity was left;
 * - `not-held`: a majority no longer holds this owner's lock.
 */
export type QuorumFailure = 'busy' | 'unreachable' | 'error' | 'too-slow' | 'not-held';

/** What a `QuorumError` is made from (its fields of the same names). */
export interface QuorumErrorDetails {
  /** The lock concerned. */
  readonly lockName: string;
  /** The operation that failed. */
  readonly operation: QuorumOperation;
  /** Why it failed. */
  readonly reason: QuorumFailure;
  /** Instances needed: floor(N / 2) + 1. */
  readonly quorum: number;
  /** One entry per instance, in the order the instances were given. */
  readonly outcomes: readonly InstanceOutcome[];
  /** For `too-slow`: the validity that was left, in ms. */
  readonly validityMs?: number;
}

/** Every `code` an error of `@holdfast/redlock` can carry (core's errors carry core's). */
export type RedlockErrorCode = 'ERR_QUORUM';

/** A Redlock operation did not get the majority (`quorum`) of instances it needs. */
export class QuorumError extends HoldfastError<RedlockErrorCode> {
  /** The lock concerned. */
  readonly lockName: string;
  /** The operation that failed. */
  readonly operation: QuorumOperation;
  /** Why it failed. */
  readonly reason: QuorumFailure;
  /** Instances needed: floor(N / 2) + 1. */
  readonly quorum: number;
  /** One entry per instance, in the order the instances were given. */
  readonly outcomes: readonly InstanceOutcome[];
  /** For `too-slow`: the validity that was left, in ms. */
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
    let key: string = o.status;
    if (o.status === 'error') key = o.timedOut ? 'timed out' : `error: ${errorText(o.error)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const summary = [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
  const slow = d.validityMs === undefined ? '' : `, ${d.validityMs} ms validity left`;
  return (
    `Lock \`${d.lockName}\`: ${d.operation} needs ${d.quorum} of ${d.outcomes.length} instances ` +
    `and failed (${d.reason}${slow}): ${summary}`
  );
}

/** The server's own words for a failed call (the reply error under holdfast's wrapper). */
function errorText(error: unknown): string {
  const inner = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const text = inner instanceof Error ? inner.message : String(inner);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** True when the server answered with an error reply (it was reachable). */
export function isErrorReply(error: unknown): boolean {
  if (error instanceof HoldfastError && error.code === 'ERR_KEY_CONFLICT') return true;
  return isServerReply(error);
}

/** An instance call that failed, as an outcome. */
export function errorOutcome(instance: number, error: unknown): InstanceOutcome {
  return { instance, status: 'error', error, timedOut: error instanceof RedisTimeoutError, replied: isErrorReply(error) };
}
