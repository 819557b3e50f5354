import type { LockKind } from '../engine/kind.js';
import { rwScripts } from './read-write-scripts.js';

const rw = (role: 'read' | 'write' | 'all', arg: string): LockKind => ({ role, ...rwScripts, args: [arg] });

/** The shared side of a read-write lock. */
export const READ: LockKind = rw('read', 'r');
/** The exclusive side of a read-write lock. */
export const WRITE: LockKind = rw('write', 'w');
/** Both sides of a read-write lock (force-release only). */
export const READ_WRITE: LockKind = rw('all', '*');
