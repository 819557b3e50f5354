import { RedisUnreachableError } from '../errors/errors.js';
import type { RedisPort } from '../port/index.js';

/**
 * What holdfast knows of a user's Redis client's connection. One set of
 * listeners per Redis client however many LockClients share it: a listener
 * each would print Node's MaxListenersExceededWarning from the eleventh on.
 *
 * - The reconnection count: a count that changed while a call was out means
 *   the client may have resent it (ioredis does; see test/README.md).
 * - For a Cluster, whether a node is reachable at all. A Cluster whose
 *   connection attempt reached none of its nodes keeps every command in its
 *   offline queue until it reconnects, so a call would wait its whole
 *   `commandTimeoutMs`, then again on every retry; refusing it at once with
 *   `RedisUnreachableError` says what is wrong, at once.
 */
interface Watch {
  value: number;
  users: number;
  /** Cluster: a `close` or `end` came after the last `ready` (the last attempt reached no node). */
  down: boolean;
  /** Resolves at the next `ready`, `close` or `end`; made on demand, shared by every waiting call. */
  settled: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;
  readonly onClose: () => void;
  readonly onReady: () => void;
}

const watches = new WeakMap<RedisPort, Watch>();

/** A view of one client's connection; `stop()` once, when its user closes. */
export interface ConnectionEpoch {
  /** The number of times the client's connection closed so far. */
  current(): number;
  /**
   * Undefined when a call may go out now (always, for a standalone client).
   * For a Cluster between connection attempts: a promise that rejects with
   * `RedisUnreachableError` if its last attempt reached no node, or that waits
   * for the attempt under way to end (bound it by the call's timeout).
   */
  reachable(): Promise<void> | undefined;
  stop(): void;
}

export function watchConnection(redis: RedisPort): ConnectionEpoch {
  let watch = watches.get(redis);
  if (!watch) {
    const settle = () => {
      const settled = created.settled;
      created.settled = undefined;
      settled?.resolve();
    };
    const created: Watch = {
      value: 0,
      users: 0,
      down: redis.isCluster && ['close', 'reconnecting', 'end'].includes(redis.status()),
      settled: undefined,
      onClose: () => {
        created.value++;
        created.down = true;
        settle();
      },
      onReady: () => {
        created.down = false;
        settle();
      },
    };
    watches.set(redis, created);
    redis.on('close', created.onClose);
    if (redis.isCluster) {
      redis.on('end', created.onClose);
      redis.on('ready', created.onReady);
    }
    watch = created;
  }
  watch.users++;
  const watched = watch;
  let stopped = false;
  return {
    current: () => watched.value,
    reachable: () => (redis.isCluster ? clusterReachable(redis, watched) : undefined),
    stop: () => {
      if (stopped) return;
      stopped = true;
      if (--watched.users > 0) return;
      redis.off('close', watched.onClose);
      redis.off('end', watched.onClose);
      redis.off('ready', watched.onReady);
      watched.settled?.resolve();
      watches.delete(redis);
    },
  };
}

function clusterReachable(redis: RedisPort, watch: Watch): Promise<void> | undefined {
  const status = redis.status();
  switch (status) {
    case 'ready':
      return undefined;
    // No connection now: `close` is followed at once by `reconnecting`, or by `end`.
    case 'close':
    case 'reconnecting':
    case 'end':
      return Promise.reject(new RedisUnreachableError(status));
    case 'wait':
      // lazyConnect: start connecting, as ioredis does for a command, and wait for the outcome.
      redis.connect();
      return redis.status() === 'wait' ? undefined : clusterReachable(redis, watch);
    case 'connecting':
    case 'connect': {
      // Another attempt, after one that reached no node: do not wait on it.
      if (watch.down) return Promise.reject(new RedisUnreachableError(status));
      // The first attempt (a client just made), or one after a ready period: wait for its outcome.
      if (!watch.settled) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        watch.settled = { promise, resolve };
      }
      return watch.settled.promise.then(() => clusterReachable(redis, watch));
    }
    default:
      // `disconnecting`: ioredis answers the call as it always does.
      return undefined;
  }
}
