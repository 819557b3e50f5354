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
