import type { Common } from './node-redis-types.js';

/**
 * A node-redis Cluster whose `connect()` reached no root node closes again
 * (`isOpen` false) with no event: `connect()` rejects, and only whoever
 * awaits it knows. holdfast never holds that promise (the application calls
 * `connect()`, often before handing the client over), so a call waiting for
 * the first attempt's outcome would wait its whole `commandTimeoutMs`.
 *
 * What node-redis does emit is an `error` for each root node it failed to
 * read the slots from, the last one just before `connect()` rejects: the
 * steps between are promise continuations, no I/O, so by the next turn of
 * the event loop (`setImmediate`) the Cluster is closed if that attempt was
 * its last. An open Cluster seen closed then, with no `disconnect` (which
 * reports a close by the application), is one whose `connect()` failed: it is
 * reported as ioredis reports its own connection attempt that failed for good,
 * `close` then `end`, to the listeners of each.
 */
export function failedConnects(redis: Common): {
  add(event: 'close' | 'end', listener: () => void): void;
  delete(event: 'close' | 'end', listener: () => void): void;
} {
  const listeners = { close: new Set<() => void>(), end: new Set<() => void>() };
  const count = () => listeners.close.size + listeners.end.size;
  /** Open when last seen, and not closed by the application since. */
  let open = false;
  let pending: ReturnType<typeof setImmediate> | undefined;
  const check = () => {
    pending = undefined;
    if (!open || redis.isOpen) return;
    open = false;
    for (const listener of [...listeners.close, ...listeners.end]) listener();
  };
  const onError = (error: unknown) => {
    if (redis.isOpen) open = true;
    pending ??= setImmediate(check);
    // Listening must not change what an `error` does: with no listener of the application's,
    // EventEmitter throws it from `emit`, and so does this one.
    if (redis.listenerCount('error') === 1) throw error;
  };
  const onDisconnect = () => (open = false);
  return {
    add: (event, listener) => {
      if (count() === 0) {
        open = redis.isOpen;
        redis.on('error', onError);
        redis.on('disconnect', onDisconnect);
      }
      listeners[event].add(listener);
    },
    delete: (event, listener) => {
      if (!listeners[event].delete(listener) || count() > 0) return;
      redis.off('error', onError);
      redis.off('disconnect', onDisconnect);
      if (pending) clearImmediate(pending);
      pending = undefined;
    },
  };
}
