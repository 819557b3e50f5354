import { scripts, type Script } from './scripts/index.js';
import { rwScripts } from './scripts/rw.js';

/**
 * What kind of hold a Lock hands out, as the shared acquisition path needs
 * to know it: which scripts acquire, release, cancel, extend, renew, inspect
 * and force-release, and the ARGV that name the side of a read-write lock.
 * Everything else (owner frames, holds, deadlines, hand-offs, request ids,
 * renewal) is the same for every kind.
 */
export interface LockKind {
  /** `lock`: the mutex; `read` / `write`: a side of a read-write lock; `all`: both sides (force-release only). */
  readonly role: 'lock' | 'read' | 'write' | 'all';
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
  /** Frees the lock (or a side of it) whoever holds it. */
  readonly forceRelease: Script;
  /** ARGV appended to acquire, inspect and force-release calls (none for the mutex). */
  readonly args: readonly string[];
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

/** The `kind` field events carry for this hold: none for the mutex, whose events are unchanged. */
export function eventKind(kind: LockKind): { kind?: 'read' | 'write' } {
  return kind.role === 'read' || kind.role === 'write' ? { kind: kind.role } : {};
}
