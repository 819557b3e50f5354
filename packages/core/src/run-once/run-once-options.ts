import * as v from '../options/validate.js';

/** Options of `client.runOnce(key, fn, options)`. */
export interface RunOnceOptions {
  /**
   * How long the key stays claimed, in ms, from the start of the call: no
   * process runs `fn` for this key again within it. While `fn` runs, the
   * claim is renewed every third of `ttlMs` (to `ttlMs` from each renewal),
   * so it also lasts as long as `fn` runs; after `fn` ends, it stays until
   * the last renewal's `ttlMs` (at least `ttlMs` from the start) runs out.
   * @default the client's `leaseMs`
   */
  readonly ttlMs?: number;
}

/**
 * What `fn` of `runOnce` is given: the claim it runs under.
 */
export interface RunOnceClaim {
  /** The run-once key, as given. */
  readonly key: string;
  /**
   * The claim's fencing token: strictly greater than every earlier claim's or
   * lock's token in the key's hash slot (the slot's counter), for writes to a
   * fenced resource.
   */
  readonly token: number;
  /**
   * Aborts when the claim ends before `fn` does: with a `LockLostError` when
   * it could not be renewed in time or was removed (another process may then
   * claim the key and run it), with a `ClientClosedError` when the client was
   * closed.
   */
  readonly signal: AbortSignal;
}

/** Outcome of `runOnce`: `fn`'s result where it ran, `{ ran: false }` where another call had claimed the key. */
export type RunOnceResult<T> =
  | {
      /** `fn` ran here. */
      readonly ran: true;
      /** What `fn` returned (resolved). */
      readonly result: T;
    }
  | {
      /** The key was claimed already: `fn` did not run here. */
      readonly ran: false;
    };

/**
 * node-cron's `RunCoordinator` (node-cron ≥ 4.6), structurally: what
 * `client.runCoordinator()` returns, for a task's `runCoordinator` option or
 * `cron.setRunCoordinator()`. Declared here so holdfast does not depend on node-cron.
 */
export interface RunCoordinatorLike {
  /** Claims `key` for `ttlMs` (as `runOnce` does) and resolves to true when this process won it. */
  shouldRun(key: string, ttlMs: number): Promise<boolean>;
  /** Stops renewing the claim of `key` (it stays claimed until its ttl runs out). */
  onComplete(key: string): void;
}

/** `ttlMs` of `runOnce`, checked (the client's `leaseMs` when absent). */
export function resolveRunOnceOptions(options: unknown, defaultTtlMs: number): { ttlMs: number } {
  const o = v.optionsObject('options', options) as RunOnceOptions;
  return { ttlMs: v.isDefault(o.ttlMs) ? defaultTtlMs : v.positiveInteger('ttlMs', o.ttlMs) };
}
