import type { RedisLike } from './scripts/index.js';

/**
 * Counts the reconnections of a user's Redis client: a count that changed
 * while a call was out means ioredis may have resent it. One `close` listener
 * per Redis client however many LockClients share it: a listener each would
 * print Node's MaxListenersExceededWarning from the eleventh on.
 */
interface Counter {
  value: number;
  users: number;
  readonly onClose: () => void;
}

const counters = new WeakMap<RedisLike, Counter>();

/** A view of one client's reconnection count; `stop()` once, when its user closes. */
export interface ConnectionEpoch {
  current(): number;
  stop(): void;
}

export function watchConnection(redis: RedisLike): ConnectionEpoch {
  let counter = counters.get(redis);
  if (!counter) {
    const created: Counter = { value: 0, users: 0, onClose: () => created.value++ };
    counters.set(redis, created);
    redis.on('close', created.onClose);
    counter = created;
  }
  counter.users++;
  const watched = counter;
  let stopped = false;
  return {
    current: () => watched.value,
    stop: () => {
      if (stopped) return;
      stopped = true;
      if (--watched.users > 0) return;
      redis.off('close', watched.onClose);
      counters.delete(redis);
    },
  };
}
