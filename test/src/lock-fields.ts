/** What lockFields needs of a client (ioredis's method names). */
export interface LockReader {
  type(key: string): Promise<string>;
  hgetall(key: string): Promise<Record<string, string>>;
  get(key: string): Promise<string | null>;
}

/**
 * A mutex's lock key as the fields of its hash. Empty when the key is gone;
 * a string (data holdfast did not write) comes back as `{ '': value }`, which
 * has no token field.
 */
export async function lockFields(redis: LockReader, key: string): Promise<Record<string, string>> {
  if ((await redis.type(key)) !== 'string') return redis.hgetall(key);
  return { '': (await redis.get(key)) ?? '' };
}
