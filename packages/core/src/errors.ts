/** A mark that survives duplicate installs of this package (unlike `instanceof`). */
const HOLDFAST_ERROR = Symbol.for('holdfast.error');

/** Every `code` a holdfast error can carry. */
export type HoldfastErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_LOCK_TIMEOUT'
  | 'ERR_LOCK_NOT_HELD'
  | 'ERR_LOCK_LOST'
  | 'ERR_LOCK_REENTRY'
  | 'ERR_CLIENT_CLOSED'
  | 'ERR_REDIS_TIMEOUT'
  | 'ERR_REDIS'
  | 'ERR_QUORUM'
  | 'ERR_REPLICATION'
  | 'ERR_KEY_CONFLICT'
  | 'ERR_EVICTION_POLICY'
  | 'ERR_PERMIT_COUNT_MISMATCH';

/**
 * Why a lease stopped being held without being released: `closed` means the
 * client was closed while the lease was held (it is no longer renewed or
 * watched; without `close({ release: true })` the lock stays in Redis until
 * its TTL runs out).
 */
export type LostReason = 'expired' | 'taken' | 'deleted' | 'unreachable' | 'closed';

/** Base class of every error holdfast throws or emits. */
export class HoldfastError extends Error {
  readonly code: HoldfastErrorCode;

  constructor(code: HoldfastErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    Object.defineProperty(this, HOLDFAST_ERROR, { value: true });
  }
}

/** True for any holdfast error, even one thrown by another copy of this package. */
export function isHoldfastError(error: unknown): error is HoldfastError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[HOLDFAST_ERROR] === true
  );
}

/** An option or argument is out of range or of the wrong type. */
export class InvalidArgumentError extends HoldfastError {
  constructor(message: string) {
    super('ERR_INVALID_ARGUMENT', message);
  }
}

/** `acquire({ waitMs })` ran out of time before the lock was free. */
export class LockTimeoutError extends HoldfastError {
  readonly lockName: string;
  readonly waitedMs: number;

  constructor(lockName: string, waitedMs: number, options?: { cause?: unknown }) {
    super('ERR_LOCK_TIMEOUT', `Timed out after ${waitedMs} ms waiting for lock \`${lockName}\``, options);
    this.lockName = lockName;
    this.waitedMs = waitedMs;
  }
}

/** The lease was already released, or the lock no longer belongs to it. */
export class LockNotHeldError extends HoldfastError {
  readonly lockName: string;

  constructor(lockName: string, detail = 'this lease no longer holds it') {
    super('ERR_LOCK_NOT_HELD', `Lock \`${lockName}\` is not held: ${detail}`);
    this.lockName = lockName;
  }
}

/** The lease was lost before it was released: its critical section is no longer exclusive. */
export class LockLostError extends HoldfastError {
  readonly lockName: string;
  readonly token: number;
  readonly reason: LostReason;

  constructor(lockName: string, token: number, reason: LostReason, options?: { cause?: unknown }) {
    super('ERR_LOCK_LOST', `Lock \`${lockName}\` (token ${token}) was lost: ${describeReason(reason)}`, options);
    this.lockName = lockName;
    this.token = token;
    this.reason = reason;
  }
}

/**
 * A reentrant acquisition that cannot be granted.
 *
 * @deprecated No mutex call throws it any more: a bare `acquire()` outside
 * `withLock` is a new owner and waits its turn (see the README's "Reentrancy
 * and ownership"). Kept so that code which catches it still compiles.
 */
export class LockReentryError extends HoldfastError {
  readonly lockName: string;

  constructor(lockName: string) {
    super(
      'ERR_LOCK_REENTRY',
      `This async chain already holds lock \`${lockName}\` through a lease taken with acquire(); ` +
        'release it first, or use withLock() for reentrant holds',
    );
    this.lockName = lockName;
  }
}

/**
 * The client was closed: no new operation is accepted, waiters pending at
 * `close()` reject with it, and the `signal` of every lease still held at
 * `close()` aborts with it.
 */
export class ClientClosedError extends HoldfastError {
  constructor() {
    super('ERR_CLIENT_CLOSED', 'The lock client is closed');
  }
}

/**
 * The lock's key holds data holdfast did not write (a value of another type,
 * or a hash without holdfast's token field). holdfast never modifies or
 * deletes it: pick another `prefix`, or remove the key yourself.
 */
export class KeyConflictError extends HoldfastError {
  readonly lockName: string;

  constructor(lockName: string) {
    super(
      'ERR_KEY_CONFLICT',
      `The key of lock \`${lockName}\` holds data holdfast did not write; it is left untouched ` +
        '(use another prefix, or remove that key)',
    );
    this.lockName = lockName;
  }
}

/** A Redis call did not answer within `commandTimeoutMs`. */
export class RedisTimeoutError extends HoldfastError {
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super('ERR_REDIS_TIMEOUT', `Redis did not answer within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** Redis answered with an error that retrying will not fix (or retries ran out). */
export class RedisCommandError extends HoldfastError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_REDIS', message, options);
  }
}

/**
 * Fewer replicas than `minReplicas` acknowledged a write within
 * `replicaTimeoutMs`: a failover now could lose it. An acquisition that got
 * this far was undone before the error was thrown.
 */
export class ReplicationError extends HoldfastError {
  /** The lock concerned, when one call carried one lock. */
  readonly lockName: string | undefined;
  readonly acknowledged: number;
  readonly required: number;
  readonly timeoutMs: number;

  constructor(lockName: string | undefined, acknowledged: number, required: number, timeoutMs: number) {
    super(
      'ERR_REPLICATION',
      `${lockName === undefined ? 'Renewal' : `Lock \`${lockName}\``}: ${acknowledged} of ${required} required ` +
        `replicas acknowledged the write within ${timeoutMs} ms`,
    );
    this.lockName = lockName;
    this.acknowledged = acknowledged;
    this.required = required;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The server evicts keys (`maxmemory` with a `maxmemory-policy` other than
 * `noeviction`): it could drop a held lock or a fencing counter. Thrown by
 * acquisitions unless the client's `evictionCheck` says otherwise.
 */
export class EvictionPolicyError extends HoldfastError {
  /** The server's `maxmemory-policy`. */
  readonly policy: string;
  /** Where it was read (`host:port`), when known. */
  readonly server: string | undefined;

  constructor(policy: string, server: string | undefined) {
    super(
      'ERR_EVICTION_POLICY',
      `Redis${server ? ` at ${server}` : ''} evicts keys (maxmemory-policy ${policy}): it could drop a held lock ` +
        "or a fencing counter. Use a server or database with 'noeviction', or set the client's `evictionCheck` " +
        "option to 'warn' or 'off' if you accept that",
    );
    this.policy = policy;
    this.server = server;
  }
}

/**
 * The semaphore's permit count stored in Redis differs from the `permits`
 * this client was given: acquiring under either count could admit more
 * holders than intended, so nothing is granted. Change the count explicitly
 * with `semaphore.setPermits(n)`, or create the semaphore with the stored count.
 */
export class PermitCountMismatchError extends HoldfastError {
  readonly semaphoreName: string;
  /** The count this client was given. */
  readonly expected: number;
  /** The count stored with the semaphore in Redis. */
  readonly stored: number;

  constructor(semaphoreName: string, expected: number, stored: number) {
    super(
      'ERR_PERMIT_COUNT_MISMATCH',
      `Semaphore \`${semaphoreName}\` has ${stored} permits in Redis, not ${expected}; ` +
        'create it with the stored count, or change the count with setPermits()',
    );
    this.semaphoreName = semaphoreName;
    this.expected = expected;
    this.stored = stored;
  }
}

function describeReason(reason: LostReason): string {
  switch (reason) {
    case 'expired':
      return 'its lease ran out before it was released or extended';
    case 'taken':
      return 'another owner holds it now';
    case 'deleted':
      return 'its key was removed from Redis';
    case 'unreachable':
      return 'Redis could not confirm a renewal before the lease ran out';
    case 'closed':
      return 'its client was closed while it was held';
  }
}
