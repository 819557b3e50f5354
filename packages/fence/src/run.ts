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
  /** Gives a pooled connection back (destroys it when `broken`); nothing for a connection the caller passed. */
  release(broken: boolean): void;
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
    await session.begin();
    for (const { resource, token } of fences) {
      const current = await session.raise(resource, token);
      if (current !== null) throw new FencedOffError(resource, token, current);
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
