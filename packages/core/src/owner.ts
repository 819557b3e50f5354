import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';

/**
 * Ownership follows the async call chain, not a thread. A frame maps
 * "client + lock name" to the owner that holds it in this chain:
 *
 * - `withLock` runs its callback in a frame where the lock is held reentrantly:
 *   any acquire of the same lock through the same client from inside the chain
 *   (including tasks the callback starts) adds a hold instead of waiting.
 * - `acquire()` outside such a frame takes the lock for a fresh owner and marks
 *   the caller's chain (AsyncLocalStorage.enterWith) with a non-reentrant entry,
 *   so a second acquire of the same lock from that chain fails fast with
 *   LockReentryError instead of waiting out its own lease. Sibling tasks that
 *   did not inherit the mark simply wait their turn.
 */

/** What a frame knows of one lock in this chain. */
export interface OwnerRef {
  readonly owner: string;
  readonly reentrant: boolean;
  /** Set once granted; the owner holds the lock while `isActive()` says so. */
  isActive: () => boolean;
}

type Frame = ReadonlyMap<string, OwnerRef>;

const storage = new AsyncLocalStorage<Frame>();

// Ids are cut from a pool filled by crypto, refilled when used up: one
// randomFillSync per 4 KiB instead of one randomBytes call per id.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** Random ids from crypto: owner ids and request ids are bearer secrets. */
export function randomId(bytes = 12): string {
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const id = pool.toString('base64url', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return id;
}

export function currentOwner(scopeKey: string): OwnerRef | undefined {
  const ref = storage.getStore()?.get(scopeKey);
  return ref?.isActive() ? ref : undefined;
}

function extend(scopeKey: string, ref: OwnerRef): Frame {
  const frame = new Map(storage.getStore());
  frame.set(scopeKey, ref);
  return frame;
}

/** Runs `fn` in a frame where `ref` owns the lock reentrantly. */
export function runOwning<T>(scopeKey: string, ref: OwnerRef, fn: () => T): T {
  return storage.run(extend(scopeKey, ref), fn);
}

/**
 * Marks the calling chain. Must run synchronously inside the caller's
 * execution (before the first await of the async function that calls it),
 * or the mark does not reach the caller's continuation.
 */
export function markChain(scopeKey: string, ref: OwnerRef): void {
  storage.enterWith(extend(scopeKey, ref));
}
