import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { FaultProxy } from './fault-proxy.js';
import { startRedis, type RedisServer } from './redis-server.js';

/** What {@link useProxiedServer} gives the tests of its describe block. */
export interface ProxiedServer {
  /** The block's own redis-server. */
  readonly server: RedisServer;
  /** The FaultProxy in front of it (dropped replies, a blackholed connection). */
  readonly proxy: FaultProxy;
  /** A client of the server whose connection goes through the proxy. */
  throughProxy(): Redis;
}

/**
 * A redis-server of the describe block's own with a FaultProxy in front: started before its
 * tests, closed and stopped after them.
 */
export function useProxiedServer(): ProxiedServer {
  let server: RedisServer | undefined;
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    server = await startRedis();
    proxy = await FaultProxy.start(server);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });
  return {
    get server() {
      return server!;
    },
    get proxy() {
      return proxy!;
    },
    throughProxy: () => server!.client({ host: proxy!.host, port: proxy!.port }),
  };
}
