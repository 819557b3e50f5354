import { ClientClosedError } from '../errors.js';
import type { Hold } from '../hold.js';
import { driftMarginMs } from '../options.js';
import { traceRelease } from '../telemetry.js';
import type { ElectionEngine } from './election-engine.js';
import { LeadershipLostError } from './election-errors.js';
import { proclaimValue } from './election-calls.js';
import type { ElectionKeys } from './election-keys.js';
import { electionValue } from './election-options.js';

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
    const onEnd = () => this.#ended();
    hold.signal.addEventListener('abort', onEnd, { once: true });
    this.#unregister = engine.onClose(() => this.#stopRenewal());
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
   * `value` is not a string.
   */
  async proclaim(value: string): Promise<void> {
    const text = electionValue(value);
    const hold = this.#hold;
    return hold.serialize(async () => {
      this.#assertLeading();
      const outcome = await proclaimValue(this.#engine, this.#keys, hold, text);
      if (!outcome.ok) {
        this.#engine.markLost(hold, outcome.reason);
        this.#assertLeading();
      }
      this.#value = text;
    });
  }

  /**
   * Ends the term on the server and hands it to the first live candidate in
   * one script. Exact: it resolves once the term has ended, or rejects with
   * the term still held and renewed (a failed request is retried within
   * `commandTimeoutMs` first). `LeadershipLostError` when the term was lost
   * already; resolves at once when it was resigned already.
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
    const requestedAt = performance.now();
    // The deadline timer reports no loss while the resignation is out; no
    // renewal may follow it on the server.
    hold.releaseRequestedAt = requestedAt;
    this.#stopRenewal();
    const renewer = hold.autoRenew ? engine.renewer() : undefined;
    renewer?.unwatch(hold);
    const epoch = engine.connectionEpoch();
    const sends = { count: 0 };
    let outcome;
    try {
      outcome = await hold.kind.calls!.release(engine, hold, sends);
    } catch (error) {
      // Unknown outcome: the term is still ours as far as we know, and kept
      // (renewed) until a resignation succeeds or it is reported lost.
      hold.releaseRequestedAt = undefined;
      if (!hold.ended) {
        if (performance.now() >= hold.deadline) engine.markLost(hold, 'expired');
        else if (renewer) renewer.watch(hold);
        else this.#startRenewal();
      }
      throw error;
    }
    if (!outcome.ok) {
      // A resend after a lost reply finds our own resignation done: the term
      // gone, or handed to the next candidate, which only our resignation
      // can do while our term runs.
      const resent = sends.count > 1 || epoch !== engine.connectionEpoch();
      const now = performance.now();
      const own =
        (requestedAt < hold.deadline && now >= hold.deadline) ||
        (resent && (outcome.reason === 'deleted' || (outcome.reason === 'taken' && now < hold.deadline)));
      if (!own) {
        engine.markLost(hold, outcome.reason);
        this.#assertLeading();
      }
    }
    this.#resigned = true;
    engine.endHold(hold);
    this.#unregister();
    engine.emitLazily('released', () => hold.eventPayload({ name: hold.name, token: hold.token, holdCount: 0 }));
  }

  /** Throws what ended the term, if it ended: ClientClosedError after close(), LeadershipLostError after a loss. */
  #assertLeading(): void {
    const hold = this.#hold;
    if (!hold.ended && performance.now() >= hold.deadline) this.#engine.sweepExpired();
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
    if (!hold.ended && performance.now() >= hold.deadline) this.#engine.sweepExpired();
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
          if (hold.ended || hold.releaseRequestedAt !== undefined) return;
          const invokedAt = performance.now();
          const outcome = await hold.kind.calls!.extend(this.#engine, hold, hold.leaseMs);
          if (hold.ended) return;
          if (!outcome.ok) {
            this.#engine.markLost(hold, outcome.reason);
            return;
          }
          const deadline = invokedAt + hold.leaseMs - driftMarginMs(hold.leaseMs, this.#engine.driftFactor);
          if (deadline > hold.deadline) {
            hold.deadline = deadline;
            this.#engine.deadlineMoved(hold);
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
