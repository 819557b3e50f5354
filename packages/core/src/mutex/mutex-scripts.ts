import { defineScript, type Script } from '../scripts/index.js';
import acquire from './acquire.lua';
import cancel from './cancel.lua';
import extend from './extend.lua';
import forceRelease from './force-release.lua';
import inspect from './inspect.lua';
import release from './release.lua';
import releaseAll from './release-all.lua';
import releaseTaken from './release-taken.lua';
import renew from './renew.lua';
import take from './take.lua';

/** The reentrant mutex's scripts (`client.lock(name)`); Redlock runs the same ones on every instance. */
export const scripts = {
  acquire: defineScript('acquire', acquire),
  release: defineScript('release', release),
  take: defineScript('take', take),
  releaseAll: defineScript('release-all', releaseAll),
  releaseTaken: defineScript('release-taken', releaseTaken),
  cancel: defineScript('cancel', cancel),
  extend: defineScript('extend', extend),
  forceRelease: defineScript('force-release', forceRelease),
  renew: defineScript('renew', renew),
  inspect: defineScript('inspect', inspect),
} as const;

/** The line of take.lua that reads the lease from ARGV (see takeWithLease). */
const TAKE_LEASE_LINE = 'local leaseMs = ARGV[2]';
const takeByLease = new Map<number, Script>();

/**
 * take.lua with `leaseMs` written into its source: sent without the lease,
 * one ARGV element less (a Lua string and a table growth the server saves on
 * every call, an argument the client does not encode). Only for a client's
 * configured leases (its default, its watchdog's: see Engine.isDefaultLease),
 * so the server caches one more script per configuration, never one per call.
 */
export function takeWithLease(leaseMs: number): Script {
  let script = takeByLease.get(leaseMs);
  if (!script) {
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 1 || !take.includes(TAKE_LEASE_LINE)) {
      throw new Error(`take.lua with lease ${leaseMs}: no such variant`);
    }
    script = defineScript(`take-${leaseMs}`, take.replace(TAKE_LEASE_LINE, `local leaseMs = '${leaseMs}'`));
    takeByLease.set(leaseMs, script);
  }
  return script;
}
