import { defineScript } from '../scripts/index.js';
import acquire from './semaphore-acquire.lua';
import extend from './semaphore-extend.lua';
import forceRelease from './semaphore-force-release.lua';
import inspect from './semaphore-inspect.lua';
import release from './semaphore-release.lua';
import renew from './semaphore-renew.lua';

/** The semaphore's scripts (a hash of holders, a sorted set of their lease ends). */
export const semaphoreScripts = {
  acquire: defineScript('semaphore-acquire', acquire),
  release: defineScript('semaphore-release', release),
  extend: defineScript('semaphore-extend', extend),
  renew: defineScript('semaphore-renew', renew),
  inspect: defineScript('semaphore-inspect', inspect),
  forceRelease: defineScript('semaphore-force-release', forceRelease),
} as const;
