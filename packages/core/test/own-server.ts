import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/**
 * A redis-server of the test file's own, for the tests that fault it or its
 * connections (the fixtures of server-faults.ts and proxy-faults.ts build on
 * it): started before the file's tests and stopped after them. After each
 * test, `beforeCleanup` runs (resume a stopped server, close a proxy), then
 * what the test registered with `onCleanup`, last first, then the checks:
 * no unhandled rejection left behind, and `afterCleanup`'s own.
 */
export function useOwnServer(options: { persistent?: boolean; beforeCleanup?: () => unknown; afterCleanup?: () => void } = {}) {
  let server: RedisServer | undefined;
  const cleanup: (() => unknown)[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    server = await startRedis({ persistent: options.persistent ?? false });
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    await options.beforeCleanup?.();
    for (const fn of cleanup.splice(0).reverse()) await fn();
    expect(unhandled.splice(0)).toEqual([]);
    options.afterCleanup?.();
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await server?.stop();
  });

  return {
    get server(): RedisServer {
      if (!server) throw new Error('the fixture server is not started yet');
      return server;
    },
    /** Runs `fn` after the current test. */
    onCleanup(fn: () => unknown): void {
      cleanup.push(fn);
    },
  };
}
