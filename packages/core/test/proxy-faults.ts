import { LockClient, type LockClientOptions } from '@holdfast/core';
import { FaultProxy, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { useOwnServer } from './own-server.js';

/**
 * Per-file fixture for faults between client and server (dropped replies, a
 * blackholed connection, SCRIPT FLUSH): a redis-server of the file's own, the
 * dropped-reply loopback proxy in front of it when a test asks for one, every
 * client and connection a test opened closed after it, and no unhandled
 * rejection left behind. The server-side faults (SIGSTOP, SIGKILL) have
 * theirs in server-faults.ts.
 */
export function useProxyFaults() {
  let proxy: FaultProxy | undefined;
  let admin: Redis | undefined;
  const own = useOwnServer({
    beforeCleanup: async () => {
      await proxy?.close();
      proxy = undefined;
      admin = undefined;
    },
  });

  const fixture = {
    get server(): RedisServer {
      return own.server;
    },
    /** The current test's proxy (throughProxy() starts it). */
    get proxy(): FaultProxy {
      if (!proxy) throw new Error('no proxy: call throughProxy() first');
      return proxy;
    },
    /** The test's one direct connection for reading and faulting the server (SCRIPT FLUSH), beside the proxy. */
    get admin(): Redis {
      admin ??= fixture.redis();
      return admin;
    },
    /** Runs `fn` after the current test (what was registered last runs first). */
    onCleanup(fn: () => unknown): void {
      own.onCleanup(fn);
    },
    /** A direct connection to the server, beside the proxy, closed after the test. */
    redis(): Redis {
      const redis = fixture.server.client();
      own.onCleanup(() => redis.disconnect());
      return redis;
    },
    /** A lock client on a direct connection. */
    locks(options: LockClientOptions = {}): LockClient {
      const locks = new LockClient(fixture.redis(), options);
      own.onCleanup(() => locks.close());
      return locks;
    },
    /** A lock client whose one connection goes through a proxy started for this test. */
    async throughProxy(options: LockClientOptions = {}): Promise<LockClient> {
      proxy = await FaultProxy.start({ host: fixture.server.host, port: fixture.server.port });
      // Through the harness: a node-redis client in the node-redis pass.
      const redis = fixture.server.client({ host: proxy.host, port: proxy.port });
      const locks = new LockClient(redis, options);
      own.onCleanup(() => redis.disconnect());
      own.onCleanup(() => locks.close());
      return locks;
    },
  };
  return fixture;
}
