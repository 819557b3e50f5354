import type { Engine } from '../engine/engine.js';
import * as validate from '../options/validate.js';
import { forgetCall, readCall, type ClaimTarget, type ResultClaimEngine } from './claim-calls.js';
import { IdempotencyInProgressError, ResultValueError } from './claim-errors.js';
import { idempotencyKeys } from './claim-keys.js';
import {
  resolveIdempotencyOptions,
  resolveRunOptions,
  type IdempotencyClaim,
  type IdempotencyOptions,
  type IdempotencyRecord,
  type IdempotencyResult,
  type ResolvedIdempotencyOptions,
} from './idempotency-options.js';
import { claimOrWait, finishClaim } from './result-claim.js';

/**
 * Idempotency keys (Stripe's `Idempotency-Key`) of one name: `run(requestKey,
 * fn)` runs `fn` once per request key across every process and stores its
 * result for `ttlMs`; every other call of the key, concurrent or later,
 * resolves with that result (`replayed: true`) without running `fn`.
 * Concurrent duplicates wait for the running call, woken over pub/sub; a
 * call that fails stores nothing and gives the key up (a waiting duplicate
 * runs `fn` instead); a call whose process crashed or froze loses its claim,
 * which a duplicate takes over with a greater fencing token. Creating one does
 * no I/O (`client.idempotency(name, options)`).
 *
 * @hideconstructor
 */
export class Idempotency<T = unknown> {
  readonly #engine: ResultClaimEngine;
  /** The name, as given. */
  readonly name: string;
  readonly #options: ResolvedIdempotencyOptions<T>;

  /** @internal */
  constructor(engine: ResultClaimEngine, name: string, options: ResolvedIdempotencyOptions<T>) {
    this.#engine = engine;
    this.name = name;
    this.#options = options;
  }

  /** How long a stored result is kept after its call completed, in ms. */
  get ttlMs(): number {
    return this.#options.ttlMs;
  }

  /**
   * Runs `fn` if no call of `requestKey` ran it yet (or the last one failed),
   * and stores its value; otherwise resolves with the stored value
   * (`replayed: true`), waiting up to `options.waitMs` for a call of the key
   * still running. Rejects with `IdempotencyConflictError` when the key was
   * first used with another `fingerprint` (`fn` not run),
   * `IdempotencyInProgressError` when the wait ran out, `fn`'s own error as it
   * is when `fn` rejected (nothing stored, the key given up),
   * `ResultValueError` when the value cannot be stored, `LockLostError` when
   * the claim was lost while `fn` ran (its value is not stored), and
   * `ClientClosedError` at `close()`.
   */
  async run<R extends T>(
    requestKey: string,
    fn: (claim: IdempotencyClaim) => R | Promise<R>,
    options?: { fingerprint?: string; waitMs?: number; signal?: AbortSignal },
  ): Promise<IdempotencyResult<R>> {
    const engine = this.#engine;
    engine.assertOpen();
    const target = this.#target(requestKey);
    validate.fn('fn', fn);
    const { fingerprint, waitMs, signal } = resolveRunOptions(options);
    const { leaseMs, ttlMs } = this.#options;
    const outcome = await claimOrWait(engine, {
      target,
      kind: 'idempotency',
      name: this.name,
      key: requestKey,
      fingerprint,
      leaseMs,
      waitMs,
      signal,
      mode: 'i',
      timedOut: (waitedMs) => new IdempotencyInProgressError(this.name, requestKey, waitedMs),
    });
    if (!outcome.won) return { value: this.#read(requestKey, outcome.text) as R, replayed: true, token: outcome.token };
    let value: R;
    try {
      value = await fn(outcome.claim.view);
    } catch (error) {
      await finishClaim(engine, target, outcome, undefined);
      throw error;
    }
    let text: string;
    try {
      text = this.#write(requestKey, value);
    } catch (error) {
      await finishClaim(engine, target, outcome, undefined);
      throw error;
    }
    await finishClaim(engine, target, outcome, { text, failed: false, keepMs: ttlMs });
    return { value, replayed: false, token: outcome.claim.token };
  }

  /**
   * The key's record: `running` while a call holds it, `done` (with its value)
   * once its result is stored; null when the key is unknown (never used,
   * failed, or expired).
   */
  async get(requestKey: string): Promise<IdempotencyRecord<T> | null> {
    const engine = this.#engine;
    engine.assertOpen();
    const found = await readCall(engine, this.#target(requestKey));
    if (!found) return null;
    const fingerprint = found.fingerprint === '' ? {} : { fingerprint: found.fingerprint };
    if (found.running) return { state: 'running', token: found.token, ...fingerprint };
    return { state: 'done', value: this.#read(requestKey, found.text), token: found.token, ...fingerprint };
  }

  /**
   * Removes the stored result of `requestKey`: the next `run` of it runs `fn`
   * again. A call still running is left alone (its result is stored when it
   * ends). Resolves to true when a result was removed.
   */
  async forget(requestKey: string): Promise<boolean> {
    const engine = this.#engine;
    engine.assertOpen();
    return forgetCall(engine, this.#target(requestKey));
  }

  #target(requestKey: string): ClaimTarget {
    const key = validate.nameLike('requestKey', requestKey);
    const engine = this.#engine;
    return { keys: idempotencyKeys(engine.options.prefix, this.name, key, engine.keyPrefix), display: `${this.name}:${key}`, kind: 'idempotency' };
  }

  #write(requestKey: string, value: T): string {
    let text: unknown;
    try {
      text = this.#options.serialize(value);
    } catch (error) {
      throw new ResultValueError(requestKey, `serialize threw (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    }
    return checkedText(requestKey, text, this.#options.maxValueBytes);
  }

  #read(requestKey: string, text: string): T {
    try {
      return this.#options.deserialize(text);
    } catch (error) {
      throw new ResultValueError(requestKey, `deserialize threw (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    }
  }
}

/** A serialized result, checked: a well-formed string of at most `maxBytes` UTF-8 bytes. */
export function checkedText(key: string, text: unknown, maxBytes: number): string {
  if (typeof text !== 'string') throw new ResultValueError(key, `serialize returned a ${typeof text}, not a string`);
  if (/\p{Cs}/u.test(text)) throw new ResultValueError(key, 'the serialized value has an unpaired UTF-16 surrogate');
  const bytes = text.length * 3 <= maxBytes ? text.length : Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) throw new ResultValueError(key, `the serialized value is ${bytes} bytes, more than maxValueBytes (${maxBytes})`, { bytes });
  return text;
}

/** `client.idempotency(name, options)`: idempotency keys by name (no I/O). */
export function newIdempotency<T>(engine: Engine, name: string, options: IdempotencyOptions<T> | undefined): Idempotency<T> {
  engine.assertOpen();
  validate.lockName(name);
  return new Idempotency<T>(engine, name, resolveIdempotencyOptions<T>(options, engine.options.leaseMs));
}
