import { performance } from 'node:perf_hooks';
import { serverCheckFailure } from '../engine/server-check.js';
import { type BarrierEngine, readBarrierCall, setPartiesCall } from './barrier-calls.js';
import { traceSync } from '../telemetry/kind-channels.js';
import { callerSignal } from '../telemetry/telemetry.js';
import { PartyCountMismatchError } from './barrier-errors.js';
import { type BarrierKeys, barrierKeys } from './barrier-keys.js';
import { partyCount, resolveArriveOptions, type ArriveOptions, resolveBarrierOptions, type BarrierOptions } from './barrier-options.js';
import { arriveAndWait, type Arrival } from './barrier-party.js';
import type { Engine } from '../engine/engine.js';
import * as validate from '../options/validate.js';

/** What `barrier.state()` resolves with. */
export interface BarrierState {
  /** The party count stored in Redis (this object's count for a barrier never used). */
  readonly parties: number;
  /** The generation the next trip returns (0 before the first trip). */
  readonly generation: number;
  /** Parties waiting in it now (parties whose lease ended are dropped first, breaking it). */
  readonly waiting: number;
}

/**
 * A named cyclic barrier (Java's `CyclicBarrier`): the `parties`-th arrival
 * trips it, every waiting party returns with the same `generation`, and the
 * next arrivals start the next generation. A waiting party holds a lease,
 * renewed by the barrier itself: a party that is lost (its process crashed or
 * froze, its connection died) or gives up (`waitMs`, `signal`, `close()`)
 * breaks the generation, and every other party waiting in it rejects with
 * `BarrierBrokenError` at once, never hanging. Creating one does no I/O
 * (`client.barrier(name, { parties })`).
 *
 * @hideconstructor
 */
export class Barrier {
  readonly #engine: BarrierEngine;
  /** The barrier's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: BarrierKeys;
  /** How long its keys stay in Redis after its last arrival, renewal or `setParties()` (see `BarrierOptions.ttlMs`). */
  readonly ttlMs: number;
  #parties: number;

  /** @internal */
  constructor(engine: BarrierEngine, name: string, keys: BarrierKeys, parties: number, ttlMs: number) {
    this.#engine = engine;
    this.name = name;
    this.keys = keys;
    this.#parties = parties;
    this.ttlMs = ttlMs;
  }

  /** The party count this object expects in Redis (changed by `setParties()`). */
  get parties(): number {
    return this.#parties;
  }

  /**
   * Arrives and waits for the barrier to trip: resolves with the generation
   * once `parties` parties arrived (at once for the last of them). Rejects
   * with `BarrierBrokenError` when another party of this generation is lost
   * or gives up; with `LockTimeoutError` after `waitMs`, `signal.reason`
   * when `signal` aborts, `ClientClosedError` when the client closes (each
   * of which breaks the generation for the others, unless it tripped
   * first); `PartyCountMismatchError` when Redis stores another count.
   * The arrival counts toward a trip only while its lease is live, and
   * never past `waitMs`: a party that gives up and cannot reach Redis
   * rejects only once its arrival has stopped counting (aborted or closed,
   * it rejects at once, and counts until its lease ends).
   */
  arrive(options?: ArriveOptions): Promise<Arrival> {
    const signal = callerSignal(options);
    const engine = this.#engine;
    return traceSync(
      () => ({ name: this.name, kind: 'barrier', operation: 'arrive', clientId: engine.clientId, ...(signal ? { signal } : {}) }),
      async () => {
        engine.assertOpen();
        const opts = resolveArriveOptions(options);
        const started = performance.now();
        opts.signal?.throwIfAborted();
        // Before anything is sent, the wait ends at its bound (nothing of this party can count yet).
        const deadline = opts.waitMs === undefined ? undefined : started + opts.waitMs;
        const ready = engine.serverReady(deadline, opts.signal);
        if (ready) await ready.catch(serverCheckFailure(this.name, started, deadline));
        const leaseMs = opts.leaseMs ?? engine.renewer()?.timeoutMs ?? engine.options.leaseMs;
        return arriveAndWait(engine, this, this.#parties, opts, leaseMs, started);
      },
    );
  }

  /**
   * The barrier as Redis holds it now. `PartyCountMismatchError` when Redis
   * stores another count than this object's.
   */
  async state(): Promise<BarrierState> {
    this.#engine.assertOpen();
    const state = await readBarrierCall(this.#engine, this);
    if (state.parties !== undefined && state.parties !== this.#parties) {
      throw new PartyCountMismatchError(this.name, this.#parties, state.parties);
    }
    return { parties: this.#parties, generation: state.generation, waiting: state.waiting };
  }

  /**
   * Stores `parties` as the barrier's count, for every client, and makes it
   * this object's count. When at least that many parties wait already, they
   * trip now. Other clients' objects, created with the old count, get
   * `PartyCountMismatchError` from then on. Resolves to the previous stored
   * count (undefined for a barrier never used).
   */
  async setParties(parties: number): Promise<number | undefined> {
    this.#engine.assertOpen();
    const count = partyCount(parties);
    await this.#engine.serverReady();
    const previous = await setPartiesCall(this.#engine, this, count);
    this.#parties = count;
    return previous;
  }
}

/** `client.barrier(name, options)`: a cyclic barrier by name (no I/O). */
export function newBarrier(engine: Engine, name: string, options: BarrierOptions): Barrier {
  engine.assertOpen();
  const { parties, ttlMs } = resolveBarrierOptions(options);
  return new Barrier(engine, name, barrierKeys(engine.options.prefix, validate.lockName(name), engine.keyPrefix), parties, ttlMs);
}
