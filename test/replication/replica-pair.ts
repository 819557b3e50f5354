import { LockClient, type LockClientOptions } from '@holdfast/core';
import { startRedisReplicaPair, type RedisReplicaPair } from '@holdfast/test-utils';
import { afterEach } from 'vitest';

/**
 * A primary and its replica per test, and the clients made on the primary, closed after each
 * test: the set-up every `minReplicas` suite shares. `client()` connects with one retry per
 * request and a 1 s command timeout, `defaults` and then `options` on top; error events are
 * swallowed (a cut-off replica fails renewals on purpose).
 */
export function useReplicaPair(defaults: LockClientOptions = {}) {
  let pair: RedisReplicaPair | undefined;
  const clients: LockClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await pair?.stop();
    pair = undefined;
  });
  return {
    /** Starts this test's pair. */
    async start(): Promise<RedisReplicaPair> {
      pair = await startRedisReplicaPair();
      return pair;
    },
    client(options: LockClientOptions = {}): LockClient {
      const locks = new LockClient(pair!.primary.client({ maxRetriesPerRequest: 1 }), { commandTimeoutMs: 1_000, ...defaults, ...options });
      locks.on('error', () => undefined);
      clients.push(locks);
      return locks;
    },
  };
}
