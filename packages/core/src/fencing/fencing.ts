import { callRedis } from '../port/redis-call.js';
import { int } from '../scripts/replies.js';
import { requirePort } from '../port/index.js';
import type { RedisLike } from '../port/redis-like.js';
import { defineScript, runScript } from '../scripts/index.js';
import fencedWriteSource from './fenced-write.lua';
import * as validate from '../options/validate.js';

/** Sets a value only for a token at least the highest seen at its key (see fencedWrite). */
export const fencedWriteScript = defineScript('fenced-write', fencedWriteSource);

/** Options of `fencedWrite()`. */
export interface FencedWriteOptions {
  /** Longest wait for the reply, in ms. @default 5_000 */
  readonly commandTimeoutMs?: number;
}

/**
 * Writes `value` to a Redis-held resource only if `token` is greater than the
 * token of the last accepted write: a holder whose lease was lost (paused,
 * partitioned) cannot overwrite the work of the holder after it. The resource
 * is a hash with fields `token` and `value`. Resolves true when written,
 * false when rejected as stale.
 */
export async function fencedWrite(
  redis: RedisLike,
  key: string,
  token: number,
  value: string,
  options: FencedWriteOptions = {},
): Promise<boolean> {
  const port = requirePort('redis', redis);
  if (typeof key !== 'string' || key.length === 0) validate.lockName(key);
  validate.positiveInteger('token', token, Number.MAX_SAFE_INTEGER);
  validate.string('value', value);
  const commandTimeoutMs = validate.positiveInteger('commandTimeoutMs', options.commandTimeoutMs ?? 5_000);
  const reply = await callRedis(() => runScript(port, fencedWriteScript, [key], [token, value]), {
    commandTimeoutMs,
    retries: 0,
  });
  return int(reply) === 1;
}

/** What `readFenced()` finds at a key written with `fencedWrite()`. */
export interface FencedValue {
  /** The token of the write that is there: the greatest token that ever wrote the key. */
  readonly token: number;
  /** The value it wrote. */
  readonly value: string;
}

/** Reads a resource written with `fencedWrite()`: its value and the token that wrote it; `null` if never written. */
export async function readFenced(redis: RedisLike, key: string): Promise<FencedValue | null> {
  const [token, value] = await requirePort('redis', redis).hmget(key, ['token', 'value']);
  if (token === null || token === undefined || value === null || value === undefined) return null;
  return { token: Number(token), value };
}
