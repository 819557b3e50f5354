import { performance } from 'node:perf_hooks';
import { LockTimeoutError } from '../errors/errors.js';
import type { ClaimView } from '../engine/renewed-claim.js';
import * as v from '../options/validate.js';
import type { ClaimTarget, ResultClaimEngine } from './claim-calls.js';
import { ResultValueError, SingleFlightError, type FlightErrorData } from './claim-errors.js';
import { flightKeys } from './claim-keys.js';
import { checkedText } from './idempotency.js';
import { DEFAULT_MAX_VALUE_BYTES, deserializeJson, serializeJson } from './idempotency-options.js';
import { claimOrWait, finishClaim } from './result-claim.js';

/**
 * How long a flight's result stays in Redis after it completed, in ms: long
 * enough for every caller that joined it (woken by its message) to read it,
 * never a cache: a call after completion starts a new flight.
 */
export const FLIGHT_RESULT_KEEP_MS = 5_000;

/** Options of `client.singleFlight(key, fn, options)`. */
export interface SingleFlightOptions {
  /**
   * The running flight's claim, in ms, renewed every third of it while `fn`
   * runs: a runner that crashed or froze loses it within this time (less the
   * drift margin), and a joined caller runs `fn` instead.
   * @default the client's `leaseMs`
   */
  readonly leaseMs?: number;
  /**
   * How long this call waits for a flight another call runs, in ms; then
   * `LockTimeoutError` (the flight goes on). The call whose `fn` runs waits
   * for its `fn`. `0`: join nothing that runs already.
   * @default no limit
   */
  readonly waitMs?: number;
}

/** What `fn` of `singleFlight` is given: the flight's claim. */
export interface FlightClaim extends ClaimView {
  /** The flight's key, as given. */
  readonly key: string;
  /**
   * The claim's fencing token: greater than every earlier claim's or lock's in the key's hash
   * slot; a joined caller that replaces a crashed runner gets a greater one.
   */
  readonly token: number;
  /** Aborts when the claim is lost before `fn` ends (`LockLostError`), or at `close()` (`ClientClosedError`). */
  readonly signal: AbortSignal;
}

/** One flight as this process sees it: the calls that share it, and its outcome. */
interface LocalFlight {
  readonly promise: Promise<unknown>;
  readonly controller: AbortController;
  /** True once `fn` runs here. */
  running: boolean;
  /** True once the flight is known to be another call's (in another process): this one waits for it. */
  waiting: boolean;
  /** Called once the flight turns out to be another's (`waiting`). */
  readonly onWaiting: (() => void)[];
  refs: number;
}

/**
 * Single-flight across processes (Go's `singleflight` over Redis): the
 * concurrent calls of one key, in this process and every other, share one
 * run of `fn`. In this process they share one promise (the runner's value or
 * error object itself); other processes wait for the stored result, woken
 * over pub/sub, and get its value or a `SingleFlightError`.
 *
 * @internal
 */
export class SingleFlights {
  readonly #engine: ResultClaimEngine;
  readonly #local = new Map<string, LocalFlight>();

  constructor(engine: ResultClaimEngine) {
    this.#engine = engine;
  }

  /** See `LockClient.singleFlight`. */
  async run<T>(key: string, fn: (claim: FlightClaim) => T | Promise<T>, options?: SingleFlightOptions): Promise<Awaited<T>> {
    const engine = this.#engine;
    engine.assertOpen();
    v.lockName(key);
    v.fn('fn', fn);
    const o = v.optionsObject('options', options) as SingleFlightOptions;
    const leaseMs = v.isDefault(o.leaseMs) ? engine.options.leaseMs : v.integerAtLeast('leaseMs', o.leaseMs, 3);
    const waitMs = v.isDefault(o.waitMs) ? undefined : v.nonNegativeInteger('waitMs', o.waitMs);
    let flight = this.#local.get(key);
    const starter = flight === undefined;
    flight ??= this.#start(key, fn, leaseMs);
    flight.refs++;
    try {
      return (await this.#await(key, flight, starter, waitMs)) as Awaited<T>;
    } finally {
      // The last caller gone while the flight waits for another process's: its wait ends too.
      if (--flight.refs === 0 && !flight.running) {
        if (this.#local.get(key) === flight) this.#local.delete(key);
        flight.controller.abort();
      }
    }
  }

  #start(key: string, fn: (claim: FlightClaim) => unknown, leaseMs: number): LocalFlight {
    const controller = new AbortController();
    const flight: LocalFlight = { promise: undefined as unknown as Promise<unknown>, controller, running: false, waiting: false, onWaiting: [], refs: 0 };
    const promise = this.#fly(key, fn, leaseMs, flight).finally(() => {
      if (this.#local.get(key) === flight) this.#local.delete(key);
    });
    // Its callers read it; a flight nobody waits for any more ends unread.
    promise.catch(() => undefined);
    (flight as { promise: Promise<unknown> }).promise = promise;
    this.#local.set(key, flight);
    return flight;
  }

  async #fly(key: string, fn: (claim: FlightClaim) => unknown, leaseMs: number, flight: LocalFlight): Promise<unknown> {
    const engine = this.#engine;
    const target: ClaimTarget = { keys: flightKeys(engine.options.prefix, key, engine.keyPrefix), display: key, kind: 'single-flight' };
    const outcome = await claimOrWait(engine, {
      target,
      kind: 'single-flight',
      name: key,
      key,
      fingerprint: '',
      leaseMs,
      waitMs: undefined,
      signal: flight.controller.signal,
      mode: 'n',
      timedOut: (waitedMs) => new LockTimeoutError(key, waitedMs),
      onWait: () => {
        flight.waiting = true;
        for (const listener of flight.onWaiting.splice(0)) listener();
      },
    });
    if (!outcome.won) {
      if (outcome.failed) throw new SingleFlightError(key, flightErrorData(outcome.text));
      return deserializeJson(outcome.text);
    }
    flight.running = true;
    let value: unknown;
    try {
      value = await fn(outcome.claim.view);
    } catch (error) {
      await this.#finish(target, outcome, JSON.stringify(describe(error)), true);
      throw error;
    }
    let text: string;
    try {
      text = checkedText(key, serializeJson(value), DEFAULT_MAX_VALUE_BYTES);
    } catch (error) {
      const failure = error instanceof ResultValueError ? error : new ResultValueError(key, `JSON cannot represent it (${String(error)})`, { cause: error });
      await this.#finish(target, outcome, JSON.stringify(describe(failure)), true);
      throw failure;
    }
    await this.#finish(target, outcome, text, false);
    return value;
  }

  /** Stores the flight's outcome for the callers that joined it elsewhere; here, `fn`'s outcome stands whatever happens. */
  async #finish(target: ClaimTarget, outcome: Parameters<typeof finishClaim>[2], text: string, failed: boolean): Promise<void> {
    await finishClaim(this.#engine, target, outcome, { text, failed, keepMs: FLIGHT_RESULT_KEEP_MS }).catch((error: unknown) =>
      this.#engine.emit('error', error),
    );
  }

  /** The flight's outcome, or `LockTimeoutError` once `waitMs` ran out while another call's `fn` ran. */
  #await(key: string, flight: LocalFlight, starter: boolean, waitMs: number | undefined): Promise<unknown> {
    if (waitMs === undefined) return flight.promise;
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const expire = () => reject(new LockTimeoutError(key, Math.round(performance.now() - started)));
      const timer = setTimeout(() => {
        // The call that started the flight waits for its own fn: its waitMs counts only once the
        // flight turned out to be another process's (from then on, when it ran out already).
        if (!starter || flight.waiting) expire();
        else if (!flight.running) flight.onWaiting.push(expire);
      }, waitMs);
      flight.promise.then(resolve, reject).finally(() => clearTimeout(timer));
    });
  }
}

/** What a flight's error is stored as. */
function describe(error: unknown): FlightErrorData {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { name: 'Error', message: String(error) };
}

function flightErrorData(text: string): FlightErrorData {
  try {
    const data = JSON.parse(text) as Partial<FlightErrorData>;
    return { name: String(data.name ?? 'Error'), message: String(data.message ?? ''), ...(typeof data.code === 'string' ? { code: data.code } : {}) };
  } catch {
    return { name: 'Error', message: text };
  }
}
