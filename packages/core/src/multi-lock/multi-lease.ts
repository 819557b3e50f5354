import { ClientClosedError, HoldfastError, LockNotHeldError, setFields } from '../errors/errors.js';
import { holdOf, type Lease } from '../lease/lease.js';
import type { Engine } from '../engine/engine.js';
import type { Hold } from '../engine/hold.js';
import * as validate from '../options/validate.js';

/**
 * `multiLease.release()` could not release every part of a multi-lock: the
 * names it released, and for each other name the error its release ended
 * with (a `LockNotHeldError` when that part was lost, a Redis error when its
 * outcome is unknown: that part then expires by its TTL).
 */
export class MultiLockReleaseError extends HoldfastError {
  /** Names whose release succeeded. */
  readonly released!: readonly string[];
  /** Name -> the error its release ended with, for every name not released. */
  readonly failures!: ReadonlyMap<string, unknown>;

  constructor(released: readonly string[], failures: ReadonlyMap<string, unknown>) {
    const detail = [...failures].map(([name, error]) => `\`${name}\` (${error instanceof Error ? error.message : String(error)})`);
    super(
      'ERR_MULTI_RELEASE',
      `Released ${released.length} of ${released.length + failures.size} locks of a multi-lock; not released: ${detail.join('; ')}`,
    );
    setFields(this, { released, failures });
  }
}

// Set once, by the class's static block (as in lease.ts).
let partsField: (lease: MultiLease) => ReadonlyMap<string, Lease>;

/** @internal The hold of every part, in the multi-lock's name order. */
export function partHolds(lease: MultiLease): Hold[] {
  return [...partsField(lease).values()].map(holdOf);
}

/**
 * One acquisition of a multi-lock: a lease on every one of its names. Each
 * part is an ordinary lock hold (renewed by the watchdog like any other);
 * this lease is held while all of them are.
 *
 * @hideconstructor
 */
export class MultiLease implements AsyncDisposable {
  readonly #parts: ReadonlyMap<string, Lease>;
  readonly #engine: Engine;
  #released = false;
  #signal: AbortSignal | undefined;
  /** The multi-lock's names (a name given twice appears once). */
  readonly names: readonly string[];
  /** The fencing token of each name's lock: compare each resource's writes against its own name's token. */
  readonly tokens: ReadonlyMap<string, number>;

  /** @internal */
  constructor(parts: ReadonlyMap<string, Lease>, engine: Engine) {
    this.#parts = parts;
    this.#engine = engine;
    this.names = [...parts.keys()];
    this.tokens = new Map([...parts].map(([name, lease]) => [name, lease.token]));
  }

  static {
    partsField = (lease) => lease.#parts;
  }

  /**
   * Aborts when ANY part is lost before it is released, with that part's
   * `LockLostError` as its reason (a `ClientClosedError` at `close()`).
   * Reading it past a part's deadline reports that loss at once, as `Lease.signal` does.
   */
  get signal(): AbortSignal {
    const signals = [...this.#parts.values()].map((lease) => lease.signal);
    this.#signal ??= AbortSignal.any(signals);
    return this.#signal;
  }

  /** True until this lease is released or any part is lost. */
  get isHeld(): boolean {
    if (this.#released) return false;
    for (const lease of this.#parts.values()) if (!lease.isHeld) return false;
    return true;
  }

  /**
   * The lease length renewals and extensions use, in ms: the same for every
   * part it took; a part re-entered inside a `withLock` keeps its own (this
   * reads the first name's).
   */
  get leaseMs(): number {
    return this.#parts.values().next().value!.leaseMs;
  }

  /**
   * Releases every part (one call per part, at once). Throws
   * `LockNotHeldError` when this lease was released already, and
   * `MultiLockReleaseError` when some part could not be released: it names
   * the parts released and, for each other one, why (a part lost earlier, or
   * a Redis failure). Every part is attempted whatever the others do.
   * After the client's `close()`, rejects with `ClientClosedError`, as every call does.
   */
  async release(): Promise<void> {
    if (this.#engine.isClosed()) throw new ClientClosedError();
    if (this.#released) throw new LockNotHeldError(this.names.join(', '), 'this lease was already released');
    this.#released = true;
    await this.#settle((lease) => lease.release());
  }

  /**
   * Resets every part's remaining lease to `leaseMs` (default: the lease's
   * length). Rejects with the first failing part's error (by name order),
   * a `LockLostError` when that part was lost, after every part was tried.
   */
  async extend(leaseMs?: number): Promise<void> {
    if (leaseMs !== undefined) validate.positiveInteger('leaseMs', leaseMs);
    if (this.#engine.isClosed()) throw new ClientClosedError();
    const results = await Promise.allSettled([...this.#parts.values()].map((lease) => lease.extend(leaseMs)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Releases every part still held (a part lost before was reported through
   * `signal` and the `lost` event), so `await using` never masks an error;
   * rejects with `MultiLockReleaseError` only when a release call failed.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    await this.#settle((lease) => lease[Symbol.asyncDispose]());
  }

  async #settle(operation: (lease: Lease) => Promise<void>): Promise<void> {
    const entries = [...this.#parts];
    const results = await Promise.allSettled(entries.map(([, lease]) => operation(lease)));
    const released: string[] = [];
    const failures = new Map<string, unknown>();
    results.forEach((result, i) => {
      const name = entries[i]![0];
      if (result.status === 'fulfilled') released.push(name);
      else failures.set(name, result.reason);
    });
    if (failures.size > 0) throw new MultiLockReleaseError(released, failures);
  }
}
