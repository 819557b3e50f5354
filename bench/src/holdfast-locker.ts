import { LockClient, type LockClientOptions } from '@holdfast/core';
import type { Locker } from './library-types.js';

/** holdfast's side of the lock scenarios on a client already connected, whichever library it is. */
export function holdfastLocker(redis: ConstructorParameters<typeof LockClient>[0], closeRedis: () => void, options: LockClientOptions = {}): Locker {
  const client = new LockClient(redis, { prefix: 'bench', ...options });
  client.on('error', () => undefined);
  const locks = new Map<string, ReturnType<LockClient['lock']>>();
  return {
    async acquire(key, signal) {
      let lock = locks.get(key);
      if (!lock) locks.set(key, (lock = client.lock(key)));
      const lease = await lock.acquire(signal ? { signal } : undefined);
      return () => lease.release();
    },
    async close() {
      await client.close();
      closeRedis();
    },
  };
}
