import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import handoff from './_handoff.lua';
import lockstate from './_lock-state.lua';
import acquire from './acquire.lua';
import cancel from './cancel.lua';
import extend from './extend.lua';
import fencedWrite from './fenced-write.lua';
import forceRelease from './force-release.lua';
import inspect from './inspect.lua';
import release from './release.lua';
import renew from './renew.lua';

/** The ioredis clients holdfast runs on. */
export type RedisLike = Redis | Cluster;

const fragments: Record<string, string> = { handoff, lockstate };

/** A Lua script sent by SHA, with its source kept for the EVAL fallback after SCRIPT FLUSH. */
export interface Script {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/**
 * A script from its Lua source: `-- @include <fragment>` lines are replaced by
 * core's shared fragments, and the SHA is computed for EVALSHA.
 */
export function defineScript(name: string, raw: string): Script {
  const source = raw.replace(/^-- @include (\w+)$/gm, (_, fragment: string) => {
    const text = fragments[fragment];
    if (text === undefined) throw new Error(`Unknown Lua fragment ${fragment} in ${name}`);
    return text;
  });
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

export const scripts = {
  acquire: defineScript('acquire', acquire),
  release: defineScript('release', release),
  cancel: defineScript('cancel', cancel),
  extend: defineScript('extend', extend),
  forceRelease: defineScript('force-release', forceRelease),
  renew: defineScript('renew', renew),
  inspect: defineScript('inspect', inspect),
  fencedWrite: defineScript('fenced-write', fencedWrite),
} as const;

/** EVAL / EVALSHA with the keys and arguments as arrays, which ioredis flattens (one level). */
type ScriptCall = (script: string, numkeys: number, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/**
 * EVALSHA, falling back to EVAL when the server lost its script cache
 * (SCRIPT FLUSH, restart, failover). One round trip in the common case.
 * The arrays are passed as they are rather than spread: a renew call carries
 * 500 keys, and spreading copied them twice more per call.
 */
export async function runScript(
  redis: RedisLike,
  s: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await (redis.evalsha as unknown as ScriptCall).call(redis, s.sha, keys.length, keys, args);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
      return await (redis.eval as unknown as ScriptCall).call(redis, s.source, keys.length, keys, args);
    }
    throw error;
  }
}
