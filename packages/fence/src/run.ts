import { FencedOffError } from './errors.js';
import type { Fence } from './fence.js';

/** One database connection, as the fenced transaction drives it (each driver has one). */
export interface Session<C> {
  /** What `fn` gets: the driver's own client or connection. */
  readonly tx: C;
  begin(): Promise<void>;
  /** Raises the resource's fence row to `token`; resolves to the stored token when that is greater, else null. */
  raise(resource: string, token: number): Promise<number | null>;
  /** Commits; rejects when the database did not commit. */
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /**
   * True for a deadlock the database resolved by rolling this transaction back
   * while it was taking fence rows (InnoDB: creating rows takes gap locks, so
   * first writers of new resources can deadlock whatever the order). Nothing of
   * `fn` has run then, so the fences are taken again in a new transaction.
   */
  isFenceDeadlock?(error: unknown): boolean;
  /** Gives a pooled connection back (destroys it when `broken`); nothing for a connection the caller passed. */
  release(broken: boolean): void;
}

/** How often the fences are taken when the database keeps choosing this transaction as a deadlock's victim. */
const FENCE_ATTEMPTS = 30;

/**
 * The pause before taking the fences again: random, and growing with each
 * attempt (up to 64 ms), so that the first writers of a new resource, which
 * deadlock on its creation, do not meet again in the same step. Once a row
 * exists, taking it is a record lock only and cannot deadlock.
 */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(64, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function raiseAll(session: Session<unknown>, fences: readonly Fence[]): Promise<void> {
  for (const { resource, token } of fences) {
    const current = await session.raise(resource, token);
    if (current !== null) throw new FencedOffError(resource, token, current);
  }
}

/**
 * The one fenced transaction: fence rows first, in the order `fences` is in
 * (fencesOf sorts it), then `fn`, then COMMIT; on any failure a rollback and
 * the failure itself rethrown, the same object. The connection is always
 * released, destroyed when the rollback itself failed (its state is unknown).
 */
export async function runFenced<C, T>(session: Session<C>, fences: readonly Fence[], fn: (tx: C) => T | Promise<T>): Promise<T> {
  let broken = false;
  try {
    for (let attempt = 1; ; attempt++) {
      await session.begin();
      try {
        await raiseAll(session, fences);
        break;
      } catch (error) {
        if (attempt >= FENCE_ATTEMPTS || !session.isFenceDeadlock?.(error)) throw error;
        await session.rollback();
        await backoff(attempt);
      }
    }
    const result = await fn(session.tx);
    await session.commit();
    return result;
  } catch (error) {
    // After a failed BEGIN or COMMIT this finds no transaction, which both databases accept.
    try {
      await session.rollback();
    } catch {
      broken = true;
    }
    throw error;
  } finally {
    session.release(broken);
  }
}
