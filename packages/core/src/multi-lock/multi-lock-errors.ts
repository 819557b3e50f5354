import { HoldfastError, setFields } from '../errors/errors.js';

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
