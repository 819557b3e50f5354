import { defineScript } from '../scripts/index.js';
import semaphore from './_semaphore.lua';
import acquire from './semaphore-acquire.lua';
import extend from './semaphore-extend.lua';
import forceRelease from './semaphore-force-release.lua';
import inspect from './semaphore-inspect.lua';
import release from './semaphore-release.lua';
import renew from './semaphore-renew.lua';

/** The semaphore's own fragment. */
const own = { semaphore };

/** The semaphore's scripts (a hash of holders, a sorted set of their lease ends). */
export const semaphoreScripts = {
  acquire: defineScript('semaphore-acquire', acquire, own),
  release: defineScript('semaphore-release', release, own),
  extend: defineScript('semaphore-extend', extend, own),
  renew: defineScript('semaphore-renew', renew, own),
  inspect: defineScript('semaphore-inspect', inspect, own),
  forceRelease: defineScript('semaphore-force-release', forceRelease, own),
} as const;
