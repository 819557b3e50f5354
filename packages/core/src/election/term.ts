import { performance } from 'node:perf_hooks';
import { ClientClosedError, HoldfastError, type LostReason, setFields } from '../errors/errors.js';
import type { Hold } from '../engine/hold.js';
import { driftMarginMs } from '../options/options.js';
import { onAbort } from '../port/abort-listeners.js';
import { isTransient } from '../port/redis-call.js';
import { traceRelease } from '../telemetry/telemetry.js';
import { proclaimValue, type ElectionEngine } from './election-calls.js';
import type { ElectionKeys } from './election-keys.js';
import { electionValue } from './election-options.js';

/**
 * A term ended without being resigned: this process is no longer the
 * election's leader, and may not have been since before this error was
 * raised only by the margin kept for clock drift (never after another
 * candidate could be elected). A term's `signal` aborts with it; `proclaim()`
 * and `resign()` on a lost term reject with it. Its `cause` is the
 * `LockLostError` the client reported (`lost` event).
 */
export class LeadershipLostError extends HoldfastError {
  /** The election whose term was lost. */
  readonly electionName!: string;
  /** The lost term's epoch (fencing token). */
  readonly epoch!: number;
  /** How the term was lost (as a lock's lease is: `expired`, `unreachable`, `taken`, `deleted`). */
  readonly reason!: LostReason;

  constructor(electionName: string, epoch: number, reason: LostReason, options?: { cause?: unknown }) {
    super('ERR_LEADERSHIP_LOST', `Leadership of election \`${electionName}\` (epoch ${epoch}) was lost: ${REASON_TEXT[reason]}`, options);
    setFields(this, { electionName, epoch, reason });
  }
}

const REASON_TEXT: Readonly<Record<LostReason, string>> = {
  expired: 'the term ran out before it was renewed',
  unreachable: 'Redis could not be reached to renew the term before it ran out',
  taken: 'another candidate holds the term',
  deleted: 'the term is gone from Redis',
  closed: 'the client was closed',
};

/** Pause before a resignation whose outcome is unknown is sent again. */
const RESEND_DELAY_MS = 20;

/**
 * One term of leadership, from election to resignation or loss. While
 * `isLeader` is true no other candidate can be elected: a term that cannot be
 * renewed is reported lost (its `signal` aborts with `LeadershipLostError`)
 * before the server could end it and elect the next candidate.
 *
 * @hideconstructor
 */
export class Term implements AsyncDisposable {
  readonly #engine: ElectionEngine;
  readonly #hold: Hold;
  readonly #keys: ElectionKeys;
  readonly #controller = new AbortController();
  #value: string;
  #resigned = false;
  #renewTimer: NodeJS.Timeout | undefined;
  readonly #unregister: () => void;
  /** The election's name. */
  readonly name: string;
  /**
   * The term's fencing token: strictly greater than every earlier term's of
   * this election (and every token issued before in its hash slot). Pass it
   * to a fenced resource so a deposed leader's late writes are refused.
   */
  readonly epoch: number;

  /** @internal */
  constructor(engine: ElectionEngine, hold: Hold, keys: ElectionKeys, value: string) {
    this.#engine = engine;
    this.#hold = hold;
    this.#keys = keys;
    this.#value = value;
    this.name = hold.name;
    this.epoch = hold.token;
    // Through onAbort, as every wait on a signal: one listener per signal, however many listen.
    const unwatch = onAbort(hold.signal, () => this.#ended());
    const unregister = engine.onClose(() => this.#stopRenewal());
    this.#unregister = () => {
      unwatch();
      unregister();
    };
    if (!hold.autoRenew) this.#startRenewal();
  }

  /** What this leader publishes (`leader()`, `observe()`): the campaign's value, or the last `proclaim()`ed. */
  get value(): string {
    return this.#value;
  }

  /**
   * Aborts when the term is lost, with a `LeadershipLostError` (a
   * `ClientClosedError` when the client was closed). Reading it past the
   * term's deadline reports the loss at once, even when the process was
   * frozen and no timer has run yet. Never aborts on `resign()`.
   */
  get signal(): AbortSignal {
    this.#checkDeadline();
    return this.#controller.signal;
  }

  /** True until the term is resigned or lost (checked against its deadline on every read). */
  get isLeader(): boolean {
    this.#checkDeadline();
    return !this.#hold.ended;
  }

  /**
   * Changes the value this leader publishes; observers see it. Rejects with
   * `LeadershipLostError` when the term was lost, `InvalidArgumentError` when
   * `value` is not a well-formed string of at most 65,536 characters.
   */
  async proclaim(value: string): Promise<void> {
    const text = electionValue(value);
    const hold = this.#hold;
    return hold.serialize(async () => {
      this.#assertLeading();
      const outcome = await proclaimValue(this.#engine, this.#keys, hold, text);
      if (!outcome.ok) {
        this.#engine.holds.markLost(hold, outcome.reason);
        this.#assertLeading();
      }
      this.#value = text;
    });
  }

  /**
   * Ends the term on the server and hands it to the first live candidate in
   * one script. Exact: it resolves once the term has ended on the server.
   * A request that fails on the way (timeout, connection) is sent again
   * until Redis answers or the term runs out; a resend that finds its own
   * earlier resignation applied counts as done. Rejects with
   * `LeadershipLostError` when the term was lost (already, or by running out
   * while Redis could not be reached: it then ends on the server by itself),
   * with `ClientClosedError` once the client is closed, and with Redis's own
   * error when it refused the call (an ACL, say): the term is then still held
   * and renewed. Resolves at once when the term was resigned already.
   */
  resign(): Promise<void> {
    const hold = this.#hold;
    return traceRelease(this.#engine.clientId, hold, this.epoch, () => hold.serialize(() => this.#resign()));
  }

  /** `await using term = await election.campaign(...)` resigns at the end of the scope, unless the term was lost. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#hold.ended) return;
    await this.resign();
  }

  async #resign(): Promise<void> {
    const hold = this.#hold;
    const engine = this.#engine;
    if (this.#resigned) return;
    this.#assertLeading();
    // No renewal may follow the resignation on the server. The deadline timer
    // still reports the term lost if it runs out before Redis answers.
    this.#stopRenewal();
    const renewer = hold.autoRenew ? engine.renewer() : undefined;
    renewer?.unwatch(hold);
    const epoch = engine.connectionEpoch();
    const sends = { count: 0 };
    let outcome;
    for (;;) {
      try {
        outcome = await hold.kind.calls.release(engine, hold, true, sends);
        break;
      } catch (error) {
        if (hold.ended) throw this.#lossReason();
        if (engine.isClosed()) throw new ClientClosedError();
        if (!isTransient(error) && !isTransient((error as { cause?: unknown }).cause)) {
          // Refused by Redis (not run): the term is held as before.
          if (renewer) renewer.watch(hold);
          else this.#startRenewal();
          throw error;
        }
        // Unknown outcome: sent again, never reported done or failed before Redis answers.
        await new Promise((resolve) => setTimeout(resolve, RESEND_DELAY_MS));
        if (hold.ended) throw this.#lossReason();
      }
    }
    // Lost while the answer was on its way (the term ran out first).
    if (hold.ended) throw this.#lossReason();
    if (!outcome.ok) {
      // A resend finds our own resignation done: the term gone, or handed to
      // the next candidate, which only our resignation can do while our term runs.
      const resent = sends.count > 1 || epoch !== engine.connectionEpoch();
      const own = resent && (outcome.reason === 'deleted' || (outcome.reason === 'taken' && performance.now() < hold.deadline));
      if (!own) {
        engine.holds.markLost(hold, outcome.reason);
        throw this.#lossReason();
      }
    }
    this.#resigned = true;
    engine.holds.end(hold);
    this.#unregister();
    engine.emitLazily('released', () => hold.eventPayload({ name: hold.name, token: hold.token, holdCount: 0 }));
  }

  /** Throws what ended the term, if it ended: ClientClosedError after close(), LeadershipLostError after a loss. */
  #assertLeading(): void {
    const hold = this.#hold;
    if (!hold.ended && performance.now() >= hold.deadline) this.#engine.holds.sweepExpired();
    if (!hold.ended) return;
    if (this.#resigned) throw new LeadershipLostError(this.name, this.epoch, 'deleted', { cause: hold.lostError });
    throw this.#lossReason();
  }

  #lossReason(): Error {
    const hold = this.#hold;
    if (hold.abortReason instanceof ClientClosedError) return new ClientClosedError();
    const lost = hold.lostError;
    return new LeadershipLostError(this.name, this.epoch, lost?.reason ?? 'deleted', { cause: lost });
  }

  /** The hold's signal aborted (lost, or closed): the term's follows, with the election's own reason. */
  #ended(): void {
    this.#stopRenewal();
    this.#unregister();
    const reason = this.#hold.abortReason;
    this.#controller.abort(reason instanceof ClientClosedError ? reason : this.#lossReason());
  }

  #checkDeadline(): void {
    const hold = this.#hold;
    if (!hold.ended && performance.now() >= hold.deadline) this.#engine.holds.sweepExpired();
  }

  /**
   * Without a watchdog the term renews itself every third of its length,
   * queued on the hold behind a proclaim or a resignation. A failed renewal
   * is tried again at the next tick; one never confirmed lets the deadline
   * timer report the term lost before the server could end it.
   */
  #startRenewal(): void {
    const hold = this.#hold;
    if (this.#renewTimer || hold.ended) return;
    const intervalMs = Math.max(1, Math.floor(hold.leaseMs / 3));
    this.#renewTimer = setInterval(() => {
      void hold
        .serialize(async () => {
          if (hold.ended) return;
          const invokedAt = performance.now();
          const outcome = await hold.kind.calls.extend(this.#engine, hold, hold.leaseMs);
          if (hold.ended) return;
          if (!outcome.ok) {
            this.#engine.holds.markLost(hold, outcome.reason);
            return;
          }
          const deadline = invokedAt + hold.leaseMs - driftMarginMs(hold.leaseMs, this.#engine.driftFactor);
          if (deadline > hold.deadline) {
            hold.deadline = deadline;
            this.#engine.holds.deadlineMoved(hold);
          }
        })
        .catch((error: unknown) => this.#engine.onError(error));
    }, intervalMs);
    this.#renewTimer.unref();
  }

  #stopRenewal(): void {
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    this.#renewTimer = undefined;
  }
}
