import { fencedWriteScript } from './fencing/fencing.js';
import { multiAcquireScript } from './multi-lock/multi-acquire.js';
import { scripts as mutexScripts } from './mutex/mutex-scripts.js';

/**
 * The mutex's scripts with the multi-lock's and `fencedWrite`'s, under the
 * names `@holdfast/core/internal` has always given them (Redlock, the CLI and
 * the tests call them directly).
 */
export const scripts = { ...mutexScripts, fencedWrite: fencedWriteScript, multiAcquire: multiAcquireScript } as const;
