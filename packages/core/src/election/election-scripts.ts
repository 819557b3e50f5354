import { scripts } from '../mutex/mutex-scripts.js';
import { defineScript, type Script } from '../scripts/index.js';
import fragment from './_election.lua';
import acquire from './election-acquire.lua';
import inspect from './election-inspect.lua';
import proclaim from './election-proclaim.lua';
import release from './election-release.lua';

/** A script of this folder: its `-- @include election` line inlined, then core's fragments as for any script. */
function electionScript(name: string, raw: string): Script {
  return defineScript(name, raw.replace(/^-- @include election$/m, () => fragment));
}

/**
 * The election's scripts. A term is a lock hash (core's lockstate layout) plus
 * the leader's value, so renewing and extending a term are the mutex's own
 * scripts: the watchdog renews terms in the same calls as locks.
 */
export const electionScripts = {
  acquire: electionScript('election-acquire', acquire),
  release: electionScript('election-release', release),
  proclaim: electionScript('election-proclaim', proclaim),
  inspect: electionScript('election-inspect', inspect),
  extend: scripts.extend,
  renew: scripts.renew,
} as const;
