import { UnsupportedClientError } from '../errors/errors.js';

/**
 * In-memory emulators of a Redis client that holdfast refuses at once, by
 * the members that tell them from the client they emulate: a lock over one
 * would not exclude, and a user would learn it only from a failing test or,
 * worse, from a passing one.
 *
 * ioredis-mock (8.x) runs Lua through fengari, and differs from Redis where
 * holdfast's scripts depend on it (measured on 8.13.1): status replies come
 * to a script as plain strings, not `{ok = …}` tables, and `redis.pcall`'s
 * errors as userdata, not `{err = …}` tables; `redis.error_reply` and
 * `SPUBLISH` are missing. A lock's own key then reads as data holdfast did
 * not write: KeyConflictError at the first acquire or re-entry.
 */

const IOREDIS_MOCK_LACKS = [
  "Redis's replies in Lua (status replies as `{ok = …}` tables, `redis.pcall` errors as `{err = …}` tables)",
  '`redis.error_reply`',
  '`SPUBLISH`',
];

const ADVICE = "Locks over it would not exclude. In unit tests, run a real redis-server (the README's 'In your own tests').";

/** True for an ioredis-mock `RedisMock` or its `Cluster` (the state it keeps in memory; ioredis has none of it). */
function isIoredisMock(client: object): boolean {
  const c = client as Record<string, unknown>;
  if (/RedisMock/.test(client.constructor?.name ?? '')) return true;
  return typeof c.shaScripts === 'object' && typeof c.customCommands === 'object' && 'expires' in c && 'keyData' in c;
}

/** Throws UnsupportedClientError for a client holdfast refuses (see above). */
export function refuseEmulators(client: object): void {
  if (isIoredisMock(client)) throw new UnsupportedClientError('ioredis-mock', IOREDIS_MOCK_LACKS, ADVICE);
}
