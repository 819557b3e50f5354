import { performance } from 'node:perf_hooks';
import { ClientClosedError } from '../errors/errors.js';
import { randomId } from '../engine/owner.js';
import { traceAcquire } from '../telemetry/telemetry.js';
import * as validate from '../options/validate.js';
import { RenewedClaim } from '../engine/renewed-claim.js';
import { claim, drop, renew, runOnceKeys, type RunOnceEngine } from './run-once-calls.js';
import { resolveRunOnceOptions, type RunCoordinatorLike, type RunOnceClaim, type RunOnceResult } from './run-once-options.js';

/**
 * Claim attempts of one call whose reply came back too late to trust (read
 * after the claim could have expired: an event loop stalled in between)
 * before it gives the key up.
 */
const LATE_REPLY_ATTEMPTS = 3;

/**
 * Run-once claims of one client: `runOnce` and node-cron's run coordinator.
 * A claim is one key per run-once key, set by one process for `ttlMs` and
 * renewed while its work runs; whoever finds it set skips.
 *
 * @internal
 */
export class RunOnce {
  readonly #engine: RunOnceEngine;

  constructor(engine: RunOnceEngine) {
    this.#engine = engine;
  }

  /** See `LockClient.runOnce`. */
  async run<T>(key: string, fn: (claim: RunOnceClaim) => T | Promise<T>, options?: unknown): Promise<RunOnceResult<Awaited<T>>> {
    this.#engine.assertOpen();
    validate.lockName(key);
    validate.fn('fn', fn);
    const { ttlMs } = resolveRunOnceOptions(options, this.#engine.options.leaseMs);
    const active = await this.#claim(key, ttlMs);
    if (!active) return { ran: false };
    try {
      return { ran: true, result: await fn(active.view) };
    } finally {
      active.stop();
    }
  }

  /** See `LockClient.runCoordinator`. */
  coordinator(): RunCoordinatorLike {
    const running = new Map<string, RenewedClaim>();
    return {
      shouldRun: async (key: string, ttlMs: number): Promise<boolean> => {
        this.#engine.assertOpen();
        validate.lockName(key);
        validate.positiveInteger('ttlMs', ttlMs);
        const active = await this.#claim(key, ttlMs);
        if (!active) return false;
        running.get(key)?.stop();
        running.set(key, active);
        return true;
      },
      onComplete: (key: string): void => {
        const active = running.get(key);
        if (!active) return;
        running.delete(key);
        active.stop();
      },
    };
  }

  /** Claims `key` for `ttlMs`: the claim, renewed from now on, or null when another call holds it. */
  #claim(key: string, ttlMs: number): Promise<RenewedClaim | null> {
    const engine = this.#engine;
    const clientId = engine.clientId;
    return traceAcquire(() => ({ name: key, kind: 'run-once', mode: 'try', clientId }), () => this.#claimNow(key, ttlMs), (active) => active);
  }

  async #claimNow(key: string, ttlMs: number): Promise<RenewedClaim | null> {
    const engine = this.#engine;
    const started = performance.now();
    const ready = engine.serverReady();
    if (ready) await ready;
    const keys = runOnceKeys(engine.options.prefix, key);
    // One owner per call: a resend of its claim (after a lost reply) finds it
    // its own and wins once; no other call can ever take it for its own.
    const owner = engine.clientId + randomId(6);
    for (let attempt = 1; ; attempt++) {
      const sentAt = performance.now();
      const outcome = await claim(engine, key, keys, owner, ttlMs);
      if (!outcome.won) return null;
      if (engine.isClosed()) throw new ClientClosedError();
      const deadline = sentAt + ttlMs - engine.marginMs(ttlMs);
      if (performance.now() < deadline) {
        const active = new RenewedClaim(engine, {
          kind: 'run-once',
          key,
          token: outcome.token,
          ttlMs,
          deadline,
          renew: (ms, limits) => renew(engine, key, keys, owner, ms, limits),
        });
        const waitedMs = Math.round(performance.now() - started);
        engine.emitLazily('acquired', () => ({ name: key, token: outcome.token, holdCount: 1, waitedMs, reentrant: false, kind: 'run-once' }));
        return active;
      }
      // Read after the claim could have expired: another process may have
      // claimed the key since. The same owner asks again (the script renews
      // the claim if it is still its own); after a few such replies the key is
      // given up, dropped so that nobody waits out a claim nobody uses.
      if (attempt >= LATE_REPLY_ATTEMPTS) {
        await drop(engine, keys, owner).catch((error: unknown) => engine.emit('error', error));
        return null;
      }
    }
  }
}
