import type { LockLostError } from '../errors/errors.js';
import type { LockKeys } from '../keys/keys.js';
import { eventKind, type EventKind, type LockKind } from './kind.js';
import type { RenewalHold } from '../options/renewal.js';
import { noteGrant } from '../telemetry/telemetry.js';

/** The first serialized operation's predecessor, shared by every hold. */
const SETTLED: Promise<unknown> = Promise.resolve();

/** What every event about a hold adds to its payload. */
type EventFields = NonNullable<RenewalHold['eventFields']>;

/**
 * One owner's hold on one lock inside a client: the state every Lease of a
 * reentrant chain shares (token, hold count, deadline, signal).
 */
export class Hold implements RenewalHold {
  readonly name: string;
  readonly keys: LockKeys;
  readonly owner: string;
  readonly token: number;
  readonly autoRenew: boolean;
  /** Every name of the multi-lock this hold is a part of (events carry it); undefined for a plain lock. */
  readonly group: readonly string[] | undefined;
  /** Whose calls serve this hold (the mutex's, a side of a read-write lock's, a semaphore's, …). */
  readonly kind: LockKind;
  /** What the kind's acquire call left for its release (`AcquireReply.releaseHint`). */
  readonly releaseHint: string | undefined;
  leaseMs: number;
  deadline: number;
  count: number;
  /** Set when the hold ends: released to 0, lost, or abandoned by close(). */
  ended = false;
  /**
   * When the release of the last lease was asked for: from then on the
   * section is over, so a deadline passing while that release is on its way
   * is not a loss (nothing exclusive runs any more).
   */
  releaseRequestedAt: number | undefined;
  lostError: LockLostError | undefined;
  #controller: AbortController | undefined;
  #abortReason: unknown;
  #tail: Promise<unknown> = SETTLED;

  constructor(init: {
    name: string;
    keys: LockKeys;
    owner: string;
    token: number;
    count: number;
    leaseMs: number;
    deadline: number;
    autoRenew: boolean;
    group?: readonly string[] | undefined;
    kind: LockKind;
    releaseHint?: string | undefined;
  }) {
    this.name = init.name;
    this.keys = init.keys;
    this.owner = init.owner;
    this.token = init.token;
    this.count = init.count;
    this.leaseMs = init.leaseMs;
    this.deadline = init.deadline;
    this.autoRenew = init.autoRenew;
    this.group = init.group;
    this.kind = init.kind;
    this.releaseHint = init.releaseHint;
    // The grant time telemetry reports hold durations from, kept only while someone subscribes.
    noteGrant(this);
  }

  /**
   * What every event about this hold adds to its payload: the side of a
   * read-write lock or `semaphore`, the multi-lock it is a part of.
   */
  get eventFields(): EventFields {
    return this.eventPayload({});
  }

  /** `payload` with this hold's {@link eventFields} set on it, in place. */
  eventPayload<T extends object>(payload: T): T & EventFields {
    const fields = payload as T & { kind?: EventKind; multiLock?: readonly string[] };
    const kind = eventKind(this.kind);
    if (kind !== undefined) fields.kind = kind;
    if (this.group) fields.multiLock = this.group;
    return fields;
  }

  get active(): boolean {
    return !this.ended;
  }

  /**
   * Aborts (with the loss as its reason) when the hold is lost. Made on first
   * use: most leases never look at it.
   */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason !== undefined) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** What `signal` aborted with (a LockLostError, or ClientClosedError at close()); undefined while held. */
  get abortReason(): unknown {
    return this.#abortReason;
  }

  /** Aborts `signal` (now, or as soon as it is made) with `reason`. */
  abort(reason: unknown): void {
    if (this.#abortReason !== undefined) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  /**
   * Runs operations of this owner on this lock one at a time, so a request id
   * stored by the scripts always belongs to the latest call and a resend after
   * a lost reply is recognised.
   */
  serialize<T>(operation: () => Promise<T>): Promise<T> {
    // Always one turn later, even the first operation: a release() asked for
    // just before close() must find the hold ended by it (ClientClosedError,
    // the lock left to its TTL), not be on the wire already. The next
    // operation runs after this one whichever way it settles.
    const run = this.#tail.then(operation, operation);
    this.#tail = run;
    return run;
  }

}
