import { LockClient, type LockClientOptions } from '@holdfast/core';
import type { Redis } from 'ioredis';
import { useOwnServer } from '../own-server.js';

/**
 * Per-file fixture of the latch and barrier tests: a redis-server of the
 * file's own (its command statistics are the file's alone), a prefix per
 * test, and every client and connection a test made closed after it.
 */
export function useSyncServer() {
  const own = useOwnServer();
  let n = 0;
  const fixture = {
    get server() {
      return own.server;
    },
    /** A fresh prefix, one per call: tests never see each other's keys. */
    prefix(): string {
      return `s${++n}`;
    },
    redis(): Redis {
      const redis = own.server.client();
      own.onCleanup(() => redis.disconnect());
      return redis;
    },
    /** A client on a connection of its own (as another process would have). */
    client(options: LockClientOptions = {}): LockClient {
      const locks = new LockClient(fixture.redis(), options);
      own.onCleanup(() => locks.close());
      return locks;
    },
    onCleanup(fn: () => unknown): void {
      own.onCleanup(fn);
    },
  };
  return fixture;
}
