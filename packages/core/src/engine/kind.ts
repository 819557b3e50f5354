import type { KeyConflictKind } from '../errors/errors.js';
import type { LockKeys } from '../keys/keys.js';
import type { RedisPort } from '../port/index.js';
import type { CallPolicy } from '../port/redis-call.js';
import type { AcquireReply, ExtendReply, ReleaseReply } from '../scripts/replies.js';
import type { Replication, Script } from '../scripts/index.js';
import type { Waiters } from './waiters.js';

/**
 * What a kind's calls and the shared acquisition path ask of the engine: the
 * client port and its call policy, pub/sub waiting, the hand-off and
 * replication settings. The engine is this object (see engine.ts); the type
 * names the part of it a call may use.
 */
export interface AcquireContext {
  readonly redis: RedisPort;
  readonly policy: CallPolicy;
  readonly waiters: Waiters;
  readonly handoffTimeoutMs: number;
  /** Replica acknowledgements every granting write needs (`minReplicas`), if any. */
  readonly replication: Replication | undefined;
  /**
   * Whether `ms` is a lease of the client's configuration (its default, its
   * watchdog's) rather than one a call chose: such a lease may be written into
   * a script's source (`takeWithLease`), one script per configuration.
   */
  isDefaultLease(ms: number): boolean;
  /** Time kept back from a lease of `ms` for clock drift. */
  marginMs(ms: number): number;
  isClosed(): boolean;
  /**
   * Undo whatever a request may have left behind (queue entry, unconfirmed
   * grant); without a request id, whatever the owner holds. Never rejects:
   * failures go to `onError`.
   */
  cancel(keys: LockKeys, owner: string, requestId: string | undefined, kind: LockKind): Promise<void>;
  /** Reports a background failure (the `error` event). */
  onError(error: unknown): void;
}

/** One acquisition, as the acquire loop runs it. */
export interface AcquireRequest {
  readonly name: string;
  readonly keys: LockKeys;
  readonly owner: string;
  readonly leaseMs: number;
  /** Monotonic ms; undefined waits without limit. */
  readonly deadline: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly mode: 'try' | 'wait' | 'reenter';
  /** Which scripts (or calls) to run. */
  readonly kind: LockKind;
  /** Read-write lock: the owner id of the caller's enclosing write hold (a downgrade). */
  readonly via?: string;
  /** When the caller's wait began (monotonic ms), for the waited time a LockTimeoutError reports; default: when the loop starts. */
  readonly started?: number;
  /**
   * A clock reading (monotonic ms) taken before this call with nothing
   * awaited since: the first attempt counts as sent then, a little earlier
   * than it is (so its lease ends no later than Redis's), without reading the
   * clock again. Undefined: the loop reads it.
   */
  readonly now?: number;
}

/** What a kind's calls read of a hold (the engine's `Hold` has all of it). */
export interface HoldState {
  readonly name: string;
  readonly keys: LockKeys;
  readonly owner: string;
}

/**
 * How many times a call was sent. More than once, an earlier send may have been
 * applied before the one that answered (a send that timed out is not withdrawn,
 * and the next one queues behind it on the same connection).
 */
export interface Sends {
  count: number;
}

/**
 * A kind of hold, as the shared acquisition path needs to know it: which
 * scripts acquire, release, cancel, extend, renew, inspect and force-release,
 * and the ARGV that name the side of a read-write lock; or, for a kind whose
 * scripts take other KEYS and ARGV (a semaphore's), its own calls. Everything
 * else (holds, deadlines, hand-offs, request ids, renewal, loss, events) is the
 * engine's, the same for every kind. Each kind's folder defines its own.
 */
export interface LockKind {
  /**
   * `lock`: the mutex; `read` / `write`: a side of a read-write lock; `all`:
   * both sides (force-release only); `semaphore`: a semaphore's permits;
   * `election`: an election's term.
   */
  readonly role: 'lock' | 'read' | 'write' | 'all' | 'semaphore' | 'election';
  /** Takes, re-enters, queues for, or confirms a hand-off of a hold. */
  readonly acquire: Script;
  /** Drops one hold (or every hold of an owner) and grants the queue's head. */
  readonly release: Script;
  /**
   * A new owner's 'try' attempt with only the KEYS and ARGV a free lock needs
   * (the mutex's take.lua): a token, a busy or foreign reply, or nil when
   * `acquire` must decide (it is sent next, with the same request).
   */
  readonly take?: Script;
  /** `take` with the lease in its source, sent without it: for the client's configured leases only (AcquireContext.isDefaultLease). */
  readonly takeWithLease?: (leaseMs: number) => Script;
  /** The last release (every hold of the owner) without a request id, the hand-off's ARGV packed in one (the mutex's release-all.lua). */
  readonly releaseAll?: Script;
  /**
   * The last release of a hold `take` granted, with only the lock key and
   * the string lock `take` wrote (the mutex's release-taken.lua); nil
   * when the lock is no longer the string `take` wrote (a waiter queued, a
   * second hold), nothing written: `releaseAll` is sent next.
   */
  readonly releaseTaken?: Script;
  /** Undoes what a request that will not be used left: its queue entry, its grant. */
  readonly cancel: Script;
  /** Sets the remaining lease of one hold. */
  readonly extend: Script;
  /** Extends many holds in one call (the watchdog's tick). */
  readonly renew: Script;
  /** Reads the state without changing it. */
  readonly inspect: Script;
  /** Frees the lock (or a side of it) whoever holds it; absent for a semaphore, which nothing force-releases. */
  readonly forceRelease?: Script;
  /** ARGV appended to acquire, inspect and force-release calls (none for the mutex). */
  readonly args: readonly string[];
  /**
   * A kind's own calls where its scripts' KEYS and ARGV differ from the
   * mutex's; absent, the mutex's calls run this kind's scripts with `args`.
   */
  readonly calls?: KindCalls;
}

/**
 * The Redis calls of a kind with KEYS and ARGV of its own. Each is what the
 * mutex's call of the same name does: the shared path (acquire loop, lease
 * operations, renewal, loss) runs them in the same places.
 */
export interface KindCalls {
  /** One attempt of an acquisition (`mode` as the acquire loop's: 'reenter' confirms a hand-off). */
  acquire(ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string): Promise<AcquireReply>;
  /** Gives the hold up (these kinds do not nest holds: always all of it); `sends` counts each time the call is sent (see releaseHold). */
  release(ctx: AcquireContext, hold: HoldState, sends: Sends): Promise<ReleaseReply>;
  /** Sets the remaining lease of the hold. */
  extend(ctx: AcquireContext, hold: HoldState, leaseMs: number): Promise<ExtendReply>;
  /**
   * Removes a request's queue entry (with `requestId`) and whatever `owner`
   * holds: one script call, which the caller runs under its call policy and
   * whose failure it reports.
   */
  cancel(ctx: AcquireContext, owner: string, requestId: string | undefined): Promise<unknown>;
  /** The key `renew` extends for a hold of this kind (the mutex's: the lock key). */
  readonly renewKey: string;
}

/** What an event is about, when it is not a mutex: a side of a read-write lock, a semaphore's permits, an election's term. */
export type EventKind = 'read' | 'write' | 'semaphore' | 'election';

/** The `kind` field events carry for a hold of this kind: none for the mutex, whose events are unchanged. */
export function eventKind(kind: LockKind): EventKind | undefined {
  return kind.role === 'all' || kind.role === 'lock' ? undefined : kind.role;
}

/** What a `KeyConflictError` about a hold of this kind names: a side (or both) of a read-write lock is the read-write lock. */
export function conflictKind(kind: LockKind): KeyConflictKind {
  const { role } = kind;
  return role === 'read' || role === 'write' || role === 'all' ? 'read-write-lock' : role;
}
