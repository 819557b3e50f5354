import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

/**
 * Ownership follows the async call chain, not a thread. A frame tells, per
 * "client + lock name", which owner holds the lock reentrantly in this chain.
 *
 * Frames are only ever entered with AsyncLocalStorage.run(), by `withLock`:
 * the callback (and the tasks it starts) runs in a frame where the lock is
 * held, so any acquire of the same lock through the same client from inside
 * adds a hold instead of waiting. Nothing else marks a chain.
 *
 * Why a bare acquire() marks nothing: the only way to reach the code after
 * `await lock.acquire()` is AsyncLocalStorage.enterWith() during the call, and
 * on Node the store it sets stays current for the rest of the caller's
 * synchronous execution. Every sibling task started there (the next callback
 * of a Promise.all, the next job of a loop) and every continuation the caller
 * creates afterwards inherits it (nodejs/node#45848): unrelated tasks were
 * taken for the holder. There is no hook between the caller's `await` and its
 * next statement that could take the mark back, so a bare acquire() is a new
 * owner every time, and waits its turn like any other.
 *
 * What a frame costs everyone else: on Node 20 and 22, an entered
 * AsyncLocalStorage turns promise hooks on for every promise of the process
 * until it is disabled; a promise-heavy loop that knows nothing of locks ran
 * 3.8-4.2x slower once any withLock had run. So the storage is on only while a
 * frame runs: when the last running frame's callback settles, it is disabled
 * (the hooks go off) and the next withLock enables it again. Nothing is lost:
 * a frame only matters while its hold is active, and withLock releases the
 * hold right after its callback settles; a task started in the frame that
 * runs on past it is a new owner either way.
 */

/** What a frame knows of one lock in this chain. */
export interface OwnerRef {
  readonly owner: string;
  /** Set once granted; the owner holds the lock while `isActive()` says so. */
  isActive: () => boolean;
}

interface Frame {
  /** Reentrant holds of enclosing withLock calls (small: one per nesting level). */
  readonly owning: ReadonlyMap<string, OwnerRef>;
}

const storage = new AsyncLocalStorage<Frame>();
const NO_OWNING: ReadonlyMap<string, OwnerRef> = new Map();

// Ids are cut from 4 KiB of crypto randomness encoded once as base64url. The
// pool is a multiple of 3 bytes, so its text has no padding and every
// character carries 6 random bits.
const POOL_BYTES = 3072;
let pool = '';
let poolOffset = 0;

/**
 * A random id from crypto, as long as the base64url text of `bytes` random
 * bytes (so at least that much entropy): owner ids and request ids are bearer
 * secrets.
 */
export function randomId(bytes = 9): string {
  const chars = Math.ceil((bytes * 4) / 3);
  if (poolOffset + chars > pool.length) {
    pool = randomBytes(POOL_BYTES).toString('base64url');
    poolOffset = 0;
  }
  const id = pool.slice(poolOffset, poolOffset + chars);
  poolOffset += chars;
  return id;
}

export function currentOwner(scopeKey: string): OwnerRef | undefined {
  const frame = storage.getStore();
  if (!frame) return undefined;
  const owning = frame.owning.get(scopeKey);
  return owning?.isActive() ? owning : undefined;
}

/** Frames whose callback has not settled yet, in any chain. */
let running = 0;

function frameSettled(): void {
  running -= 1;
  if (running === 0) storage.disable();
}

/**
 * Runs `fn` in a frame where `ref` owns the lock reentrantly. The frame counts
 * as running until `fn` returns or, when it returns a promise, until that
 * promise settles.
 */
export function runOwning<T>(scopeKey: string, ref: OwnerRef, fn: () => T): T {
  const frame = storage.getStore();
  const owning = new Map<string, OwnerRef>();
  for (const [k, r] of frame?.owning ?? NO_OWNING) if (r.isActive()) owning.set(k, r);
  owning.set(scopeKey, ref);
  running += 1;
  let result: T;
  try {
    result = storage.run({ owning }, fn);
  } catch (error) {
    frameSettled();
    throw error;
  }
  if (result instanceof Promise) result.then(frameSettled, frameSettled);
  // Another thenable is not watched (some start their work on every then()):
  // the frame then counts as running for good, and the storage stays on.
  else if (typeof (result as { then?: unknown } | null | undefined)?.then !== 'function') frameSettled();
  return result;
}
