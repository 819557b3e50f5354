import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

/**
 * Ownership follows the async call chain, not a thread. A frame tells, per
 * "client + lock name", which owner holds the lock in this chain:
 *
 * - `withLock` runs its callback in a frame where the lock is held reentrantly:
 *   any acquire of the same lock through the same client from inside the chain
 *   (including tasks the callback starts) adds a hold instead of waiting.
 * - `acquire()` outside such a frame takes the lock for a fresh owner and marks
 *   the caller's chain, so a second acquire of the same lock from that chain
 *   fails fast with LockReentryError instead of waiting out its own lease.
 *   Sibling tasks that did not inherit the mark simply wait their turn.
 *
 * Marks live in one mutable table per chain, entered once with
 * AsyncLocalStorage.enterWith and then only updated, so a chain that takes
 * thousands of locks costs one entry per lock it still holds, not a copy of
 * every earlier frame per acquisition.
 */

/** What a frame knows of one lock in this chain. */
export interface OwnerRef {
  readonly owner: string;
  readonly reentrant: boolean;
  /** Set once granted; the owner holds the lock while `isActive()` says so. */
  isActive: () => boolean;
}

/** Marks of one chain; entries whose hold ended are pruned as it grows. */
class ChainMarks {
  readonly refs = new Map<string, OwnerRef>();
  #pruneAt = 32;

  set(key: string, ref: OwnerRef): void {
    this.refs.set(key, ref);
    if (this.refs.size < this.#pruneAt) return;
    for (const [k, r] of this.refs) if (k !== key && !r.isActive()) this.refs.delete(k);
    this.#pruneAt = Math.max(32, this.refs.size * 2);
  }
}

interface Frame {
  /** Reentrant holds of enclosing withLock calls (small: one per nesting level). */
  readonly owning: ReadonlyMap<string, OwnerRef>;
  readonly marks: ChainMarks | undefined;
}

const storage = new AsyncLocalStorage<Frame>();
const NO_OWNING: ReadonlyMap<string, OwnerRef> = new Map();

// Ids are cut from 4 KiB of crypto randomness encoded once as base64url:
// a substring per id instead of an encoding call (a few µs) per id, three of
// them per acquire + release. The pool is a multiple of 3 bytes, so its text
// has no padding and every character carries 6 random bits.
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
  if (owning?.isActive()) return owning;
  const marked = frame.marks?.refs.get(scopeKey);
  return marked?.isActive() ? marked : undefined;
}

/** Runs `fn` in a frame where `ref` owns the lock reentrantly. */
export function runOwning<T>(scopeKey: string, ref: OwnerRef, fn: () => T): T {
  const frame = storage.getStore();
  const owning = new Map<string, OwnerRef>();
  for (const [k, r] of frame?.owning ?? NO_OWNING) if (r.isActive()) owning.set(k, r);
  owning.set(scopeKey, ref);
  return storage.run({ owning, marks: frame?.marks }, fn);
}

/**
 * Marks the calling chain. Must run synchronously inside the caller's
 * execution (before the first await of the async function that calls it),
 * or a chain's first mark does not reach the caller's continuation.
 */
export function markChain(scopeKey: string, ref: OwnerRef): void {
  const frame = storage.getStore();
  if (frame?.marks) {
    frame.marks.set(scopeKey, ref);
    return;
  }
  const marks = new ChainMarks();
  marks.set(scopeKey, ref);
  storage.enterWith({ owning: frame?.owning ?? NO_OWNING, marks });
}
