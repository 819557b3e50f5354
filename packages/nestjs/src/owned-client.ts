import type { RedisLike } from '@holdfast/core';

/** How long a graceful close may wait for replies still due before the connection is cut. */
const GRACEFUL_CLOSE_MS = 1_000;

interface IoredisShape {
  readonly status: string;
  quit(): Promise<unknown>;
  disconnect(): void;
  once(event: 'end', listener: () => void): unknown;
}

interface NodeRedisShape {
  readonly isOpen: boolean;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<unknown>;
}

/** Resolves when `promise` settles or after `ms`, whichever is first; never rejects, leaves no timer. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise.then(() => undefined, () => undefined), timeout]);
  clearTimeout(timer);
}

/**
 * Closes a client the module made: gracefully first (the lock client's last
 * commands, such as its registration's DEL, are still on their way), then for
 * good, so no socket or reconnection timer is left. ioredis (`Redis`,
 * `Cluster`) and node-redis (client, Cluster, Sentinel) shapes; never throws.
 */
export async function closeOwnedClient(client: RedisLike): Promise<void> {
  try {
    if ('isOpen' in (client as object)) {
      const redis = client as unknown as NodeRedisShape;
      if (!redis.isOpen) return;
      const graceful = redis.close ?? redis.quit;
      if (graceful) await settledWithin(graceful.call(redis), GRACEFUL_CLOSE_MS);
      if (redis.isOpen) {
        if (redis.destroy) redis.destroy();
        else await settledWithin(redis.disconnect?.() ?? Promise.resolve(), GRACEFUL_CLOSE_MS);
      }
      return;
    }
    const redis = client as unknown as IoredisShape;
    if (redis.status === 'end') return;
    // ioredis reports the socket closed with `end`: until then it is still open.
    const ended = new Promise<void>((resolve) => redis.once('end', resolve));
    await settledWithin(redis.quit(), GRACEFUL_CLOSE_MS);
    if (redis.status !== 'end') redis.disconnect();
    await settledWithin(ended, GRACEFUL_CLOSE_MS);
  } catch {
    // A client that throws while closing is closed as far as anything here can
    // tell; shutdown must go on for the application's other modules.
  }
}
