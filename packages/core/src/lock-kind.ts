import type { AcquireContext, AcquireRequest } from './acquire.js';
import type { Hold } from './hold.js';
import type { AcquireReply, ExtendReply, ReleaseReply } from './replies.js';
import type { Sends } from './release.js';
import { scripts, type Script } from './scripts/index.js';
import { rwScripts } from './scripts/rw.js';

/**
 * What kind of hold an acquisition hands out, as the shared acquisition path
 * needs to know it: which scripts acquire, release, cancel, extend, renew,
 * inspect and force-release, and the ARGV that name the side of a read-write
 * lock; or, for a kind whose scripts take other KEYS and ARGV (a semaphore's),
 * its own calls. Everything else (holds, deadlines, hand-offs, request ids,
 * renewal, loss, events) is the same for every kind.
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
  release(ctx: AcquireContext, hold: Hold, sends: Sends): Promise<ReleaseReply>;
  /** Sets the remaining lease of the hold. */
  extend(ctx: AcquireContext, hold: Hold, leaseMs: number): Promise<ExtendReply>;
  /**
   * Removes a request's queue entry (with `requestId`) and whatever `owner`
   * holds: one script call, which the caller runs under its call policy and
   * whose failure it reports.
   */
  cancel(ctx: AcquireContext, owner: string, requestId: string | undefined): Promise<unknown>;
  /** The key `renew` extends for a hold of this kind (the mutex's: the lock key). */
  readonly renewKey: string;
}

/** The reentrant mutex (`client.lock(name)`). */
export const MUTEX: LockKind = {
  role: 'lock',
  acquire: scripts.acquire,
  release: scripts.release,
  cancel: scripts.cancel,
  extend: scripts.extend,
  renew: scripts.renew,
  inspect: scripts.inspect,
  forceRelease: scripts.forceRelease,
  args: [],
};

const rw = (role: 'read' | 'write' | 'all', arg: string): LockKind => ({ role, ...rwScripts, args: [arg] });

/** The shared side of a read-write lock. */
export const READ: LockKind = rw('read', 'r');
/** The exclusive side of a read-write lock. */
export const WRITE: LockKind = rw('write', 'w');
/** Both sides of a read-write lock (force-release). */
export const READ_WRITE: LockKind = rw('all', '*');

/** What an event is about, when it is not a mutex: a side of a read-write lock, a semaphore's permits, an election's term. */
export type EventKind = 'read' | 'write' | 'semaphore' | 'election';

/** The `kind` field events carry for this hold: none for the mutex, whose events are unchanged. */
export function eventKind(kind: LockKind): EventKind | undefined {
  return kind.role === 'all' || kind.role === 'lock' ? undefined : kind.role;
}
