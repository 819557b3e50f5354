import { defineScript } from '../scripts/index.js';
import acquire from './acquire.lua';
import cancel from './cancel.lua';
import extend from './extend.lua';
import forceRelease from './force-release.lua';
import inspect from './inspect.lua';
import release from './release.lua';
import releaseAll from './release-all.lua';
import renew from './renew.lua';

/** The reentrant mutex's scripts (`client.lock(name)`); Redlock runs the same ones on every instance. */
export const scripts = {
  acquire: defineScript('acquire', acquire),
  release: defineScript('release', release),
  releaseAll: defineScript('release-all', releaseAll),
  cancel: defineScript('cancel', cancel),
  extend: defineScript('extend', extend),
  forceRelease: defineScript('force-release', forceRelease),
  renew: defineScript('renew', renew),
  inspect: defineScript('inspect', inspect),
} as const;
