/** A mark that survives duplicate installs of this package (unlike `instanceof`). */
const HOLDFAST_ERROR = Symbol.for('holdfast.error');

/**
 * Every `code` an error of `@holdfast/core` can carry. Each package declares its own
 * (`@holdfast/redlock`'s `RedlockErrorCode`, `@holdfast/fence`'s `FenceErrorCode`).
 */
export type HoldfastErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_UNSUPPORTED_CLIENT'
  | 'ERR_LOCK_TIMEOUT'
  | 'ERR_LOCK_NOT_HELD'
  | 'ERR_LOCK_LOST'
  | 'ERR_LOCK_REENTRY'
  | 'ERR_CLIENT_CLOSED'
  | 'ERR_REDIS_TIMEOUT'
  | 'ERR_REDIS'
  | 'ERR_REDIS_UNREACHABLE'
  | 'ERR_REPLICATION'
  | 'ERR_KEY_CONFLICT'
  | 'ERR_EVICTION_POLICY'
  | 'ERR_MULTI_RELEASE'
  | 'ERR_LOCK_UPGRADE'
  | 'ERR_PERMIT_COUNT_MISMATCH'
  | 'ERR_BARRIER_BROKEN'
  | 'ERR_PARTY_COUNT_MISMATCH'
  | 'ERR_LEADERSHIP_LOST'
  | 'ERR_IDEMPOTENCY_IN_PROGRESS'
  | 'ERR_IDEMPOTENCY_CONFLICT'
  | 'ERR_RESULT_VALUE'
  | 'ERR_SINGLE_FLIGHT'
  | 'ERR_INBOX_FULL'
  | 'ERR_INBOX_MESSAGE'
  | 'ERR_PUBSUB_REFUSED';

/**
 * Why a lease stopped being held without being released: `closed` means the
 * client was closed while the lease was held (it is no longer renewed or
 * watched; without `close({ release: true })` the lock stays in Redis until
 * its TTL runs out).
 */
export type LostReason = 'expired' | 'taken' | 'deleted' | 'unreachable' | 'closed';

const REASON_TEXT: Readonly<Record<LostReason, string>> = {
  expired: 'its lease ran out before it was released or extended',
  taken: 'another owner holds it now',
  deleted: 'its key was removed from Redis',
  unreachable: 'Redis could not confirm a renewal before the lease ran out',
  closed: 'its client was closed while it was held',
};

/**
 * Base class of every error holdfast throws or emits. `Code`: the codes of the package that
 * declares the subclass (core's by default).
 */
export class HoldfastError<Code extends string = HoldfastErrorCode> extends Error {
  /** What went wrong, as a stable string to test against (the message may change). */
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    Object.defineProperty(this, HOLDFAST_ERROR, { value: true });
  }
}

/**
 * Sets the fields an error class declares, once `super()` has run: one call, typed, so that a
 * field cannot be misspelled.
 */
export function setFields<E extends Error, K extends keyof E>(error: E, fields: Pick<E, K>): void {
  Object.assign(error, fields);
}

/**
 * True for any holdfast error, even one thrown by another copy of this package. An error already
 * typed as one package's (a Redlock's `QuorumError`) keeps its type, and its package's codes.
 */
export function isHoldfastError<E extends HoldfastError<string>>(error: E): error is E;
export function isHoldfastError(error: unknown): error is HoldfastError;
export function isHoldfastError(error: unknown): boolean {
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

/**
 * The client handed to `LockClient` (or Redlock) is one holdfast refuses at
 * construction: it looks like a supported client but cannot run holdfast's
 * scripts as Redis does, so locks over it would not exclude (an in-memory
 * emulator such as ioredis-mock). An `InvalidArgumentError` too.
 */
export class UnsupportedClientError extends InvalidArgumentError {
  override readonly code: HoldfastErrorCode = 'ERR_UNSUPPORTED_CLIENT';
  /** The client library refused (`'ioredis-mock'`). */
  readonly client: string;
  /** What it lacks that holdfast's scripts need, one entry per gap. */
  readonly lacks: readonly string[];

  constructor(client: string, lacks: readonly string[], advice: string) {
    super(`${client} is not supported: it lacks ${lacks.join('; ')}. ${advice}`);
    this.client = client;
    this.lacks = lacks;
  }
}

/** `acquire({ waitMs })` ran out of time before the lock was free. */
export class LockTimeoutError extends HoldfastError {
  /** The lock that was waited for. */
  readonly lockName!: string;
  /** How long the call waited, in ms. */
  readonly waitedMs!: number;

  constructor(lockName: string, waitedMs: number, options?: { cause?: unknown }) {
    super('ERR_LOCK_TIMEOUT', `Timed out after ${waitedMs} ms waiting for lock \`${lockName}\``, options);
    setFields(this, { lockName, waitedMs });
  }
}

/** The lease was already released, or the lock no longer belongs to it. */
export class LockNotHeldError extends HoldfastError {
  /** The lock the lease was for. */
  readonly lockName: string;

  constructor(lockName: string, detail = 'this lease no longer holds it') {
    super('ERR_LOCK_NOT_HELD', `Lock \`${lockName}\` is not held: ${detail}`);
    this.lockName = lockName;
  }
}

/** The lease was lost before it was released: its critical section is no longer exclusive. */
export class LockLostError extends HoldfastError {
  /** The lock that was lost. */
  readonly lockName!: string;
  /** The fencing token of the lost lease (0 when the loss was found before a token was known). */
  readonly token!: number;
  /** How it was lost. */
  readonly reason!: LostReason;

  constructor(lockName: string, token: number, reason: LostReason, options?: { cause?: unknown }) {
    super('ERR_LOCK_LOST', `Lock \`${lockName}\` (token ${token}) was lost: ${REASON_TEXT[reason]}`, options);
    setFields(this, { lockName, token, reason });
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
  /** The lock concerned. */
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
 * The kind of synchronizer whose key a `KeyConflictError` names: `lock` (a
 * mutex, a multi-lock's part, a Redlock), `read-write-lock`, `semaphore`,
 * `election`, `latch`, `barrier`, `run-once` (a `runOnce` key), `idempotency` (an idempotency
 * key: the name is `<name>:<request key>`), `single-flight` (a flight's key) or
 * `inbox` (an inbox's key: the name is `<name>:<key>`).
 */
export type KeyConflictKind = 'lock' | 'read-write-lock' | 'semaphore' | 'election' | 'latch' | 'barrier' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox';

/** How a message names each kind. */
const KIND_NOUN: Readonly<Record<KeyConflictKind, string>> = {
  lock: 'lock',
  'read-write-lock': 'read-write lock',
  semaphore: 'semaphore',
  election: 'election',
  latch: 'latch',
  barrier: 'barrier',
  'run-once': 'run-once key',
  idempotency: 'idempotency key',
  'single-flight': 'single-flight key',
  inbox: 'inbox key',
};

/**
 * A synchronizer's key holds data holdfast did not write (a value of another
 * type, or a hash without holdfast's fields). holdfast never modifies or
 * deletes it: pick another `prefix`, or remove the key yourself.
 */
export class KeyConflictError extends HoldfastError {
  /** The name of the synchronizer (lock, semaphore, latch, ..., or run-once key) whose key holds foreign data. */
  readonly lockName!: string;
  /** Which kind of synchronizer that name is (the message names it too). */
  readonly kind!: KeyConflictKind;

  /**
   * @param lockName the synchronizer's name
   * @param kind what `lockName` names (`'lock'` when left out)
   */
  constructor(lockName: string, kind: KeyConflictKind = 'lock') {
    super(
      'ERR_KEY_CONFLICT',
      `The key of ${KIND_NOUN[kind]} \`${lockName}\` holds data holdfast did not write; it is left untouched ` +
        '(use another prefix, or remove that key)',
    );
    setFields(this, { lockName, kind });
  }
}

/** A Redis call did not answer within `commandTimeoutMs`. */
export class RedisTimeoutError extends HoldfastError {
  /** The wait that ran out, in ms (the call's `commandTimeoutMs`, or less when a deadline came first). */
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
 * The server (or a proxy before it) refused holdfast's pub/sub subscription:
 * an error reply to `SSUBSCRIBE`/`SUBSCRIBE` (an ACL without them, a proxy
 * that does not forward pub/sub), or a subscription never confirmed while the
 * server answered other commands. Emitted once as a `warning` by a client with
 * `wait: 'auto'`, which spins from then on (see `LockClientOptions.wait`);
 * never thrown. `cause`: the refusal as the client reported it.
 */
export class PubSubRefusedError extends HoldfastError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(
      'ERR_PUBSUB_REFUSED',
      `Redis refused the pub/sub subscription (${detail}): this client waits by polling from now on (wait: 'spin'); allow pub/sub, or set wait: 'spin' to silence this`,
      options,
    );
  }
}

/**
 * A Redis Cluster client has no node to send a call to: its last connection
 * attempt reached none of the nodes it knows (`status` is `close`,
 * `reconnecting`, or `connecting` again after such an attempt), or it gave up
 * reconnecting (`end`: its `clusterRetryStrategy` returned no delay, or it was
 * closed). The call was refused at once, without waiting `commandTimeoutMs`
 * for a reply that cannot come (the refused attempt sent nothing). Also a
 * node-redis client (standalone, Cluster or Sentinel) the application closed
 * (`end`: it sends nothing any more). A `RedisCommandError`, so
 * code that catches those catches this too.
 */
export class RedisUnreachableError extends RedisCommandError {
  override readonly code: HoldfastErrorCode = 'ERR_REDIS_UNREACHABLE';
  /**
   * The client's `status` when the call was refused. `end`: it will not
   * reconnect by itself, so the call was not retried; any other: it is
   * between connection attempts, and the call was retried like any transient
   * failure (each attempt refused at once while no node answers).
   */
  readonly status: string;

  /** `message`: what happened, when it is not the Cluster's (a node-redis client that was closed). */
  constructor(status: string, message?: string, options?: { cause?: unknown }) {
    super(
      message ??
      (status === 'end'
        ? 'No node of the Redis Cluster is reachable: the client has ended (it was closed, or its ' +
            'clusterRetryStrategy gave up reconnecting) and sends nothing any more'
        : `No node of the Redis Cluster is reachable: its last connection attempt reached none of its nodes (status ${status})`),
      options,
    );
    this.status = status;
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
  /** Replicas that acknowledged the write in time. */
  readonly acknowledged!: number;
  /** Replicas required (`minReplicas`). */
  readonly required!: number;
  /** How long the acknowledgements were waited for, in ms (`replicaTimeoutMs`). */
  readonly timeoutMs!: number;

  constructor(lockName: string | undefined, acknowledged: number, required: number, timeoutMs: number) {
    super(
      'ERR_REPLICATION',
      `${lockName === undefined ? 'Renewal' : `Lock \`${lockName}\``}: ${acknowledged} of ${required} required ` +
        `replicas acknowledged the write within ${timeoutMs} ms`,
    );
    setFields(this, { lockName, acknowledged, required, timeoutMs });
  }
}

/**
 * The server evicts keys (`maxmemory` with a `maxmemory-policy` other than
 * `noeviction`): it could drop a held lock or a fencing counter. Thrown by
 * acquisitions unless the client's `evictionCheck` says otherwise.
 */
export class EvictionPolicyError extends HoldfastError {
  /** The server's `maxmemory-policy`. */
  readonly policy!: string;
  /** Where it was read (`host:port`), when known. */
  readonly server: string | undefined;

  constructor(policy: string, server: string | undefined) {
    super(
      'ERR_EVICTION_POLICY',
      `Redis${server ? ` at ${server}` : ''} evicts keys (maxmemory-policy ${policy}): it could drop a held lock ` +
        "or a fencing counter. Use a server or database with 'noeviction', or set the client's `evictionCheck` " +
        "option to 'warn' or 'off' if you accept that",
    );
    setFields(this, { policy, server });
  }
}

/**
 * A count stored with a synchronizer in Redis differs from the one this client was given (a
 * semaphore's permits, a barrier's parties): nothing was done under either count.
 */
export abstract class CountMismatchError extends HoldfastError {
  /** The count this client was given. */
  readonly expected!: number;
  /** The count stored in Redis. */
  readonly stored!: number;

  /**
   * `what`: the synchronizer as the message names it (``Semaphore `jobs` ``); `counted`: what the
   * count counts (`permits`); `setter`: the method that changes it.
   */
  constructor(code: HoldfastErrorCode, what: string, counted: string, setter: string, expected: number, stored: number) {
    super(code, `${what} has ${stored} ${counted} in Redis, not ${expected}; create it with the stored count, or change the count with ${setter}()`);
    setFields(this, { expected, stored });
  }
}

/**
 * `write` was asked for inside a `read` hold of the same read-write lock, in
 * the same async chain. Upgrading would wait for every reader to leave, this
 * one included: a deadlock. Thrown at once; release the read hold first.
 */
export class LockUpgradeError extends HoldfastError {
  /** The read-write lock whose `write` was asked for. */
  readonly lockName: string;

  constructor(lockName: string) {
    super(
      'ERR_LOCK_UPGRADE',
      `This async chain holds a read lease of \`${lockName}\`: a write inside it would wait for itself; release the read hold first`,
    );
    this.lockName = lockName;
  }
}
