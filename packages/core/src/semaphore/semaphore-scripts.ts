import { defineScripts } from '../scripts/index.js';
import semaphore from './_semaphore.lua';
import acquire from './semaphore-acquire.lua';
import extend from './semaphore-extend.lua';
import forceRelease from './semaphore-force-release.lua';
import inspect from './semaphore-inspect.lua';
import release from './semaphore-release.lua';
import renew from './semaphore-renew.lua';

/** The semaphore's scripts (a hash of holders, a sorted set of their lease ends). */
export const semaphoreScripts = defineScripts('semaphore', { acquire, release, extend, renew, inspect, forceRelease }, { semaphore });
