import type { Engine } from '../engine/engine.js';
import { Lock } from '../mutex/lock.js';
import { lockKind, type LockSideKind } from '../mutex/mutex-calls.js';
import { defineScripts } from '../scripts/index.js';
import rwstate from './_rw-state.lua';
import acquire from './rw-acquire.lua';
import cancel from './rw-cancel.lua';
import extend from './rw-extend.lua';
import forceRelease from './rw-force-release.lua';
import inspect from './rw-inspect.lua';
import release from './rw-release.lua';
import renew from './rw-renew.lua';

/** The read-write lock's scripts (one hash per lock, a field and a lease per holder). */
export const rwScripts = defineScripts('rw', { acquire, release, cancel, extend, forceRelease, renew, inspect }, { rwstate });

/** The shared side of a read-write lock: a `Lock` on the read-write scripts, with the lock's calls. */
export const READ: LockSideKind = lockKind('read', rwScripts, ['r']);
/** The exclusive side of a read-write lock. */
export const WRITE: LockSideKind = lockKind('write', rwScripts, ['w']);
/** Both sides of a read-write lock (force-release only). */
export const READ_WRITE: LockSideKind = lockKind('all', rwScripts, ['*']);

/**
 * A named read-write lock (`client.readWriteLock(name)`): any number of
 * readers share `read`, one writer holds `write` alone. Creating one does no
 * I/O. Each side is a `Lock` with its own leases, fencing tokens and events
 * (their payloads carry `kind: 'read' | 'write'`).
 *
 * - Reentrant per async chain like the mutex: inside `read.withLock` a read
 *   re-enters, inside `write.withLock` a write re-enters.
 * - Downgrade: a read inside the chain's own `write.withLock` is granted at
 *   once, as a hold of its own that outlives the write's release.
 * - Upgrade: a write inside the chain's own `read.withLock` rejects at once
 *   with `LockUpgradeError` (it would wait for itself).
 * - Fair: waiters are served in arrival order; a waiting writer holds back
 *   readers that come after it, and a writer's release grants every reader
 *   at the head of the queue at once, with one message.
 * - Fencing: a writer's token is greater than every token issued before for
 *   this lock; a reader's token is the slot's fencing counter when it was
 *   granted: at least every earlier writer's token, below every later one's.
 *
 * @hideconstructor
 */
export class ReadWriteLock {
  /** The lock's name, as given. */
  readonly name: string;
  /** The shared side: held by any number of readers while no writer holds. */
  readonly read: Lock;
  /** The exclusive side: held by one writer while nobody else holds either side. */
  readonly write: Lock;
  readonly #both: Lock;

  /** @internal */
  constructor(read: Lock, write: Lock, both: Lock) {
    this.name = read.name;
    this.read = read;
    this.write = write;
    this.#both = both;
  }

  /**
   * Frees both sides whoever holds them (every reader and the writer) and
   * grants the queue's head. Leases of this client on either side are
   * reported lost (`deleted`). Resolves true when a hold was removed; rejects
   * with `KeyConflictError`, removing nothing, when the key holds data
   * holdfast did not write. (`read.forceRelease()` frees the readers only,
   * `write.forceRelease()` the writer only.)
   */
  forceRelease(): Promise<boolean> {
    return this.#both.forceRelease();
  }
}

/** `client.readWriteLock(name)`: a read-write lock by name (no I/O); each side is a `Lock` of its own kind. */
export function newReadWriteLock(engine: Engine, name: string): ReadWriteLock {
  engine.assertOpen();
  const keys = engine.readWriteKeys(name);
  const side = (kind: typeof READ) => new Lock(engine, name, keys, kind);
  return new ReadWriteLock(side(READ), side(WRITE), side(READ_WRITE));
}
