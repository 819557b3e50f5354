import { namedKeys, type LockKeys } from '../keys/keys.js';

/**
 * Every Redis name one semaphore uses, in the hash slot of its name's tag
 * (the same scheme as a lock's, see keys.ts), with type letters of its own so
 * a semaphore and a lock of the same name never share a key:
 *
 *   <prefix>:{<tag>}:sem:<name>    hash: '#' -> permit count, '=' -> permits in use,
 *                                  owner -> '<permits>|<token>' (see _semaphore.lua)
 *   <prefix>:{<tag>}:semx:<name>   sorted set: owner -> lease end (server time, ms)
 *   <prefix>:{<tag>}:semq:<name>   waiter queue (list)
 *   <prefix>:{<tag>}:semw:<name>   waiter table (hash)
 *   <prefix>:{<tag>}:semc:<name>   pub/sub channel
 *   <prefix>:{<tag>}:fence         the slot's fencing counter, shared with locks
 *
 * Shaped as LockKeys (`lock` is the semaphore's hash) so that a semaphore's
 * hold rides the mutex's machinery: the slot for renewal grouping, the
 * channel for the waiters.
 */
export interface SemaphoreKeys extends LockKeys {
  /** The holders' lease ends, by server time. */
  readonly expiry: string;
}

/** The names of semaphore `name` under `prefix` (`keyPrefix`: the ioredis client's own, see LockKeys.channel). */
export function semaphoreKeys(prefix: string, name: string, keyPrefix = ''): SemaphoreKeys {
  return namedKeys(prefix, name, keyPrefix, { lock: 'sem:', expiry: 'semx:', queue: 'semq:', waiters: 'semw:', fence: 'fence' }, { channel: 'semc:' });
}

/** The five keys every semaphore script but extend takes, in their KEYS order. */
export function scriptKeys(keys: SemaphoreKeys): string[] {
  return [keys.lock, keys.expiry, keys.queue, keys.waiters, keys.fence];
}
