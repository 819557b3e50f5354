import { LockClient, type LockClientOptions } from '@holdfast/core';
import { FaultProxy, startRedis, type RedisServer } from '@holdfast/test-utils';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/**
 * Per-file fixture for faults between client and server (dropped replies, a
 * blackholed connection, SCRIPT FLUSH): a redis-server of the file's own, the
 * dropped-reply loopback proxy in front of it when a test asks for one, every
 * client and connection a test opened closed after it, and no unhandled
 * rejection left behind. The server-side faults (SIGSTOP, SIGKILL) have
 * theirs in server-faults.ts.
 */
export function useProxyFaults() {
  let server: RedisServer | undefined;
  let proxy: FaultProxy | undefined;
  let admin: Redis | undefined;
  const cleanup: (() => unknown)[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    server = await startRedis();
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    admin = undefined;
    for (const fn of cleanup.splice(0).reverse()) await fn();
    expect(unhandled.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await server?.stop();
  });

  const fixture = {
    get server(): RedisServer {
      if (!server) throw new Error('the fixture server is not started yet');
      return server;
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
    /** A direct connection to the server, beside the proxy, closed after the test. */
    redis(): Redis {
      const redis = fixture.server.client();
      cleanup.push(() => redis.disconnect());
      return redis;
    },
    /** A lock client on a direct connection. */
    locks(options: LockClientOptions = {}): LockClient {
      const locks = new LockClient(fixture.redis(), options);
      cleanup.push(() => locks.close());
      return locks;
    },
    /** A lock client whose one connection goes through a proxy started for this test. */
    async throughProxy(options: LockClientOptions = {}): Promise<LockClient> {
      proxy = await FaultProxy.start({ host: fixture.server.host, port: fixture.server.port });
      const redis = new Redis({ host: proxy.host, port: proxy.port });
      redis.on('error', () => undefined);
      const locks = new LockClient(redis, options);
      cleanup.push(() => redis.disconnect(), () => locks.close());
      return locks;
    },
  };
  return fixture;
}
