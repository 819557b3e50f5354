import { takenLockFields } from '../../packages/core/src/mutex/taken-lock.js';

/** What lockFields needs of a client (ioredis's method names). */
export interface LockReader {
  type(key: string): Promise<string>;
  hgetall(key: string): Promise<Record<string, string>>;
  get(key: string): Promise<string | null>;
}

/**
 * A mutex's lock key as the fields of its hash, in either of its layouts: the
 * hash itself, or the string take.lua writes for a free lock's first hold
 * (read as `{ owner: '1', '@request': token }`, core's takenLockFields).
 * Empty when the key is gone; a string of another layout comes back as
 * `{ '': value }`, which has no token field.
 */
export async function lockFields(redis: LockReader, key: string): Promise<Record<string, string>> {
  if ((await redis.type(key)) !== 'string') return redis.hgetall(key);
  const value = (await redis.get(key)) ?? '';
  return takenLockFields(value) ?? { '': value };
}
