import { defineScript } from '../scripts/index.js';
import acquire from './rw-acquire.lua';
import cancel from './rw-cancel.lua';
import extend from './rw-extend.lua';
import forceRelease from './rw-force-release.lua';
import inspect from './rw-inspect.lua';
import release from './rw-release.lua';
import renew from './rw-renew.lua';

/** The read-write lock's scripts (one hash per lock, a field and a lease per holder). */
export const rwScripts = {
  acquire: defineScript('rw-acquire', acquire),
  release: defineScript('rw-release', release),
  cancel: defineScript('rw-cancel', cancel),
  extend: defineScript('rw-extend', extend),
  forceRelease: defineScript('rw-force-release', forceRelease),
  renew: defineScript('rw-renew', renew),
  inspect: defineScript('rw-inspect', inspect),
} as const;
