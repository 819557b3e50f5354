import { performance } from 'node:perf_hooks';
import { acquireLoop, cleanupWaitMs, send as sendAcquire, waitFailure, type Granted } from '../engine/acquire-loop.js';
import { ClientClosedError, LockTimeoutError } from '../errors/errors.js';
import { Hold } from '../engine/hold.js';
import type { LockKind } from '../engine/kind.js';
import { randomId } from '../engine/owner.js';
import { serverCheckFailure } from '../engine/server-check.js';
import { withTimeout } from '../port/redis-call.js';
import type { Renewer } from '../options/renewal.js';
import { callerSignal, traceAcquire } from '../telemetry/telemetry.js';
import { inspectElection, electionKind, type ElectionEngine, type Leader } from './election-calls.js';
import { observeLeader } from './observe.js';
import { Term } from './term.js';
import type { Engine } from '../engine/engine.js';
import * as validate from '../options/validate.js';
import { electionKeys, type ElectionKeys } from './election-keys.js';
import { checkTermMs, resolveCampaignOptions, resolveElectionOptions, resolveObserveOptions, type CampaignOptions, type ElectionOptions, type ObserveOptions } from './election-options.js';

/** The hold behind each term, for telemetry (kept off the public class). */
const holds = new WeakMap<Term, Hold>();

/**
 * A named leader election: at most one leader at a time, for a term that
 * lasts until it is resigned or lost. Candidates wait in FIFO order and are
 * woken by the hand-off of the term (pub/sub, no polling); a candidate whose
 * process died is skipped. Every term carries an epoch, a fencing token
 * greater than every earlier term's. Creating one does no I/O; every method
 * goes through the client it came from (`client.election(name, { termMs })`).
 *
 * @hideconstructor
 */
export class Election {
  readonly #engine: ElectionEngine;
  readonly #termMs: number | undefined;
  /** The election's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: ElectionKeys;

  /** @internal */
  constructor(engine: ElectionEngine, name: string, keys: ElectionKeys, termMs: number | undefined) {
    this.#engine = engine;
    this.name = name;
    this.keys = keys;
    this.#termMs = termMs;
  }

  /**
   * Stands as a candidate publishing `value`, and resolves with the term once
   * elected: at once when nobody leads, otherwise when every candidate queued
   * earlier has led and resigned (or lost its term, or died). A campaign that
   * gives up (`waitMs`: `LockTimeoutError`; `signal`: its reason; `close()`:
   * `ClientClosedError`) leaves no trace in Redis and is never elected later.
   * `InvalidArgumentError` for a value that is not a well-formed string of at
   * most 65,536 characters, or a default term (the watchdog's `timeoutMs`, the
   * client's `leaseMs`) too short to be held; `KeyConflictError` when the
   * election's keys hold data holdfast did not write.
   */
  campaign(options: CampaignOptions): Promise<Term> {
    const engine = this.#engine;
    const message = () => ({ name: this.name, kind: 'election' as const, mode: 'wait' as const, clientId: engine.clientId, signal: callerSignal(options) });
    return traceAcquire(message, () => this.#campaign(options), (term: Term) => holds.get(term)!) as Promise<Term>;
  }

  /** Who leads now, from any client (candidate or not): `{ value, epoch }`, or null when nobody does. */
  async leader(): Promise<Leader | null> {
    this.#engine.assertOpen();
    return (await inspectElection(this.#engine, this.name, this.keys)).leader;
  }

  /**
   * The leader now, then every change, in order and each once (elected,
   * proclaimed, resigned, and a leader that vanished by crash or expiry,
   * within its remaining term plus the drift margin): null while nobody
   * leads, and between two terms. Changes made while the subscription is
   * down are reported as the state read once it is back, and so is a history
   * that went backwards (Redis lost its data: epochs start again lower). Ends when `signal`
   * aborts; rejects with `ClientClosedError` when the client is closed.
   */
  observe(options?: ObserveOptions): AsyncIterable<Leader | null> {
    this.#engine.assertOpen();
    const { signal } = resolveObserveOptions(options);
    return observeLeader(this.#engine, this.name, this.keys, signal);
  }

  async #campaign(options: unknown): Promise<Term> {
    const engine = this.#engine;
    engine.assertOpen();
    const opts = resolveCampaignOptions(options);
    const started = performance.now();
    const deadline = opts.waitMs === undefined ? undefined : started + opts.waitMs;
    const ready = engine.serverReady(deadline, opts.signal);
    if (ready) await ready.catch(serverCheckFailure(this.name, started, deadline));
    const attached = engine.renewer();
    // A default term is checked here, where it is known: the watchdog's `timeoutMs` or the client's `leaseMs`.
    const termMs = this.#termMs ?? checkTermMs(attached ? 'timeoutMs' : 'leaseMs', attached?.timeoutMs ?? engine.options.leaseMs, engine.driftFactor);
    // The watchdog renews every third of its own timeout: a shorter term renews itself.
    const renewer = attached && termMs >= attached.timeoutMs ? attached : undefined;
    const kind = electionKind(this.keys, opts.value);
    for (;;) {
      // One owner per campaign: a resend is recognised by it, and undoing it
      // can only ever undo this campaign.
      const owner = engine.clientId + randomId(6);
      const request = { name: this.name, keys: this.keys, owner, leaseMs: termMs, deadline, signal: opts.signal, mode: 'wait' as const, kind, started };
      const granted = await acquireLoop(engine, request);
      const confirmedAt = granted!.claim ? await this.#confirm(request, granted!, kind, started) : granted!.invokedAt;
      if (confirmedAt !== undefined) {
        const hold = new Hold({
          name: this.name,
          keys: this.keys,
          owner,
          token: granted!.token,
          count: 1,
          leaseMs: termMs,
          deadline: confirmedAt + termMs - engine.marginMs(termMs),
          autoRenew: renewer !== undefined,
          kind,
        });
        if (engine.isClosed()) {
          void engine.cancel(this.keys, owner, undefined, kind);
          throw new ClientClosedError();
        }
        if (performance.now() < hold.deadline) return this.#elected(hold, renewer, opts.value, started);
        // Read after the term it granted had run out (a stalled event loop):
        // never lead on it; undo what is left of it and stand again.
        await this.#undo(request, granted!.requestId, kind);
      }
      if (deadline !== undefined && performance.now() >= deadline) {
        throw new LockTimeoutError(this.name, Math.round(performance.now() - started));
      }
      opts.signal?.throwIfAborted();
    }
  }

  /**
   * Confirms a term handed over by message before anyone sees this candidate
   * as leader (its value is published by the confirmation): the monotonic
   * time it was sent, or undefined when the claim had run out (stand again).
   * Within the campaign's wait, as every call of it: a confirmation not
   * answered by its `waitMs` (or its signal's abort) is undone, and the
   * campaign rejects then (LockTimeoutError, with the time waited).
   */
  async #confirm(request: Parameters<typeof acquireLoop>[1], granted: Granted, kind: LockKind, started: number): Promise<number | undefined> {
    const invokedAt = performance.now();
    let reply;
    try {
      reply = await sendAcquire(this.#engine, { ...request, mode: 'reenter' }, granted.claim!.requestId, 'reenter');
    } catch (error) {
      await this.#undo(request, granted.requestId, kind);
      throw waitFailure(error, this.name, started, request.deadline, false);
    }
    return reply.granted ? invokedAt : undefined;
  }

  /**
   * Undoes, by its request id, what a campaign's attempt did or will still
   * do (a call not waited for may yet be applied: this comes after it on the
   * connection). Sent at once, and awaited only while the campaign's wait
   * allows, as the engine's own clean-up is (acquire-loop.ts, `failed`).
   */
  async #undo(request: Parameters<typeof acquireLoop>[1], requestId: string, kind: LockKind): Promise<void> {
    const engine = this.#engine;
    const cleanup = engine.cancel(this.keys, request.owner, requestId, kind);
    const waitMs = cleanupWaitMs(engine, request.deadline, request.signal);
    if (waitMs > 0) await withTimeout(cleanup, waitMs).catch(() => undefined);
  }

  #elected(hold: Hold, renewer: Renewer | undefined, value: string, started: number): Term {
    const engine = this.#engine;
    engine.holds.add(hold, renewer);
    const term = new Term(engine, hold, this.keys, value);
    holds.set(term, hold);
    const waitedMs = Math.round(performance.now() - started);
    engine.emitLazily('acquired', () => hold.eventPayload({ name: this.name, token: hold.token, holdCount: 1, waitedMs, reentrant: false }));
    return term;
  }
}

/** `client.election(name, options)`: a leader election by name (no I/O). */
export function newElection(engine: Engine, name: string, options: ElectionOptions | undefined): Election {
  engine.assertOpen();
  const { termMs } = resolveElectionOptions(options, engine.driftFactor);
  return new Election(engine, name, electionKeys(engine.options.prefix, validate.lockName(name), engine.keyPrefix), termMs);
}
