import { scripts } from '../mutex/mutex-calls.js';
import { defineScripts } from '../scripts/index.js';
import election from './_election.lua';
import acquire from './election-acquire.lua';
import inspect from './election-inspect.lua';
import proclaim from './election-proclaim.lua';
import release from './election-release.lua';

/**
 * The election's scripts. A term is a lock hash (core's lockstate layout) plus
 * the leader's value, so renewing and extending a term are the mutex's own
 * scripts: the watchdog renews terms in the same calls as locks.
 */
export const electionScripts = {
  ...defineScripts('election', { acquire, release, proclaim, inspect }, { election }),
  extend: scripts.extend,
  renew: scripts.renew,
} as const;
