import * as v from '../options/validate.js';

/** The default of `IdempotencyOptions.ttlMs`: one day. */
export const DEFAULT_RESULT_TTL_MS = 86_400_000;

/** The default of `IdempotencyOptions.maxValueBytes`: 1 MiB. */
export const DEFAULT_MAX_VALUE_BYTES = 1_048_576;

/** The largest `maxValueBytes` accepted: 512 MiB, Redis's largest string. */
export const MAX_VALUE_BYTES_LIMIT = 536_870_912;

/** Options of `client.idempotency(name, options)`. */
export interface IdempotencyOptions<T = unknown> {
  /**
   * How long a stored result is kept after its call completed, in ms: every
   * later `run` of the key within it replays it; after it, the key is new.
   * @default 86_400_000 (one day)
   */
  readonly ttlMs?: number;
  /**
   * The running call's claim, in ms: renewed every third of it while `fn`
   * runs; a process that crashed or froze loses it within this time (less
   * the drift margin, at which it reports it lost), and a waiting duplicate
   * takes the key over.
   * @default the client's `leaseMs`
   */
  readonly leaseMs?: number;
  /**
   * Turns a result into the string stored. Must return a well-formed string.
   * @default JSON.stringify (`undefined` stored as such)
   */
  readonly serialize?: (value: T) => string;
  /**
   * Turns a stored string back into a result, for replays.
   * @default JSON.parse (`undefined` read back as such)
   */
  readonly deserialize?: (text: string) => T;
  /**
   * The largest serialized result stored, in UTF-8 bytes: a larger one
   * rejects with `ResultValueError` and nothing is stored.
   * @default 1_048_576 (1 MiB)
   */
  readonly maxValueBytes?: number;
}

/** Options of `idempotency.run(requestKey, fn, options)`. */
export interface IdempotencyRunOptions {
  /**
   * What identifies the request's payload (a hash of its body, say): a later
   * call of the key with another fingerprint is refused with
   * `IdempotencyConflictError`. Non-empty, at most 1024 UTF-8 bytes, like
   * lock names. Calls without one match only calls without one.
   * @default none
   */
  readonly fingerprint?: string;
  /**
   * How long a duplicate waits for the running call of its key to end, in ms;
   * then `IdempotencyInProgressError`. `0`: answer at once.
   * @default no limit (as long as the running call's claim lives)
   */
  readonly waitMs?: number;
  /** Ends the wait (not `fn`) with `signal.reason` when it aborts. @default none */
  readonly signal?: AbortSignal;
}

/** What `fn` of `idempotency.run` is given: the claim it runs under. */
export interface IdempotencyClaim {
  /** The request key, as given. */
  readonly key: string;
  /**
   * The claim's fencing token: strictly greater than every earlier claim's or
   * lock's token in the key's hash slot; a call that takes over from one that
   * crashed or froze gets a greater one, so `@holdfast/fence` refuses the
   * writes of the older.
   */
  readonly token: number;
  /**
   * Aborts when the claim ends before `fn` does: `LockLostError` when it could
   * not be renewed in time (another process may take the key over; this
   * call's result will not be stored), `ClientClosedError` at `close()`.
   */
  readonly signal: AbortSignal;
}

/** What `idempotency.run` resolves with. */
export interface IdempotencyResult<T> {
  /** `fn`'s value: as it returned it in the call that ran it, deserialized in every replay. */
  readonly value: T;
  /** False in the call that ran `fn`; true in every call answered with the stored result. */
  readonly replayed: boolean;
  /** The fencing token of the claim under which `fn` ran. */
  readonly token: number;
}

/** What `idempotency.get` resolves with, when the key is known. */
export interface IdempotencyRecord<T> {
  /** `running`: a call holds the key; `done`: its result is stored. */
  readonly state: 'running' | 'done';
  /** The stored result (deserialized), when done. */
  readonly value?: T;
  /** The fingerprint the key was first used with, when it had one. */
  readonly fingerprint?: string;
  /** The fencing token of the claim that ran (or runs) `fn`. */
  readonly token: number;
}

/** `IdempotencyOptions`, checked, every default filled in. */
export interface ResolvedIdempotencyOptions<T> {
  readonly ttlMs: number;
  readonly leaseMs: number;
  readonly serialize: (value: T) => string;
  readonly deserialize: (text: string) => T;
  readonly maxValueBytes: number;
}

/**
 * JSON, with `undefined` (what a `void` function returns) as the empty
 * string: JSON.stringify never returns that for a value it can write.
 */
export function serializeJson(value: unknown): string {
  return value === undefined ? '' : (JSON.stringify(value) as string | undefined) ?? unserializable(value);
}

function unserializable(value: unknown): never {
  throw new TypeError(`JSON cannot represent a ${typeof value}`);
}

/** The inverse of `serializeJson`. */
export function deserializeJson(text: string): unknown {
  return text === '' ? undefined : JSON.parse(text);
}

/** The options of `client.idempotency()`, checked. */
export function resolveIdempotencyOptions<T>(options: unknown, defaultLeaseMs: number): ResolvedIdempotencyOptions<T> {
  const o = v.optionsObject('options', options) as IdempotencyOptions<T>;
  if (!v.isDefault(o.serialize)) v.fn('serialize', o.serialize);
  if (!v.isDefault(o.deserialize)) v.fn('deserialize', o.deserialize);
  return {
    ttlMs: v.isDefault(o.ttlMs) ? DEFAULT_RESULT_TTL_MS : v.positiveInteger('ttlMs', o.ttlMs),
    leaseMs: v.isDefault(o.leaseMs) ? defaultLeaseMs : v.integerAtLeast('leaseMs', o.leaseMs, 3),
    serialize: o.serialize ?? (serializeJson as (value: T) => string),
    deserialize: o.deserialize ?? (deserializeJson as (text: string) => T),
    maxValueBytes: v.isDefault(o.maxValueBytes) ? DEFAULT_MAX_VALUE_BYTES : v.positiveInteger('maxValueBytes', o.maxValueBytes, MAX_VALUE_BYTES_LIMIT),
  };
}

/** The options of `run()`, checked. */
export function resolveRunOptions(options: unknown): { fingerprint: string; waitMs: number | undefined; signal: AbortSignal | undefined } {
  const o = v.optionsObject('options', options) as IdempotencyRunOptions;
  return {
    fingerprint: v.isDefault(o.fingerprint) ? '' : v.nameLike('fingerprint', o.fingerprint),
    waitMs: v.isDefault(o.waitMs) ? undefined : v.nonNegativeInteger('waitMs', o.waitMs),
    signal: v.signal(o.signal),
  };
}
