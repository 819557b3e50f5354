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
