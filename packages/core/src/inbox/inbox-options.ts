import * as v from '../options/validate.js';

/** How the handler is called: one message, every pending one, or every pending one once posts pause. */
export type InboxMode = 'each' | 'batch' | 'debounce';

/** What a handler call is given besides the key and its messages. */
export interface InboxTurn {
  /**
   * The processor's fencing token for the key: strictly greater than every
   * earlier processor's of this key (and every lock's token of its hash
   * slot). A message handled again after a crash is handled with a greater
   * token: fence the handler's side effects with it (`@holdfast/fence`).
   */
  readonly token: number;
  /**
   * Aborts when the processor loses the key before the call ends (a
   * `LockLostError`: its lease could not be renewed in time, another process
   * may take the key over) or when the inbox or its client is closed. The
   * messages of an aborted call stay pending.
   */
  readonly signal: AbortSignal;
  /** Which call this is for these messages: 1, then 2… after a rejection (or a crash mid-call). */
  readonly attempt: number;
}

/** The function an inbox calls, one call at a time per key across every process. */
export type InboxHandler<T> = (key: string, messages: T[], turn: InboxTurn) => unknown;

/** Options of `client.inbox(name, options)`. */
export interface InboxOptions<T> {
  /**
   * Handles a key's messages, in post order, one call at a time per key
   * across every process. A call that rejects is retried with backoff. An
   * inbox without a handler only posts (and reads): keys posted to are handled by started
   * inboxes of the same name elsewhere.
   * @default none (post only)
   */
  readonly handler?: InboxHandler<T>;
  /**
   * `each`: one message per call; `batch`: every pending message, up to
   * `maxBatch`; `debounce`: waits until no message was posted for
   * `debounceMs`, then every pending message (up to `maxBatch`).
   * @default 'each'
   */
  readonly mode?: InboxMode;
  /** `debounce` mode: how long after the newest message a call starts, in ms. @default 1000 */
  readonly debounceMs?: number;
  /** Most messages in one call (`batch` and `debounce`). @default 100 */
  readonly maxBatch?: number;
  /**
   * Handler calls per message before it is dead-lettered (a `dead` event with
   * reason `attempts`, then removed): a call that rejects is retried after
   * `retryDelayMs`, doubled per attempt (at most 60 s).
   * @default 5
   */
  readonly maxAttempts?: number;
  /** The first retry's delay, in ms; each next one doubles it (at most 60 000). @default 500 */
  readonly retryDelayMs?: number;
  /**
   * A pending message older than this (ms since it was posted) is dropped
   * with a `dead` event (reason `ttl`) instead of handled. 0: never.
   * @default 0
   */
  readonly ttlMs?: number;
  /**
   * The processor's lease on a key, in ms, renewed every third while it
   * works; a processor that dies or freezes loses the key after it.
   * @default the client's `leaseMs`
   */
  readonly leaseMs?: number;
  /** Keys handled at once by this inbox in this process. @default 16 */
  readonly concurrency?: number;
  /** Pending messages per key: `post` past it rejects with `InboxFullError`, nothing stored. @default 10000 */
  readonly maxPending?: number;
  /** Largest serialized message, in UTF-8 bytes: `post` past it rejects with `InboxMessageTooLargeError`. @default 1048576 */
  readonly maxMessageBytes?: number;
  /**
   * How often a started inbox (`start()`) looks for keys whose processor
   * died, in ms (see `recover()`).
   * @default the lease's third
   */
  readonly recoverIntervalMs?: number;
  /** Turns a message into the string stored. @default JSON.stringify */
  readonly serialize?: (message: T) => string;
  /** Turns a stored string back into a message. @default JSON.parse */
  readonly deserialize?: (stored: string) => T;
}

/** Options of `inbox.drain(key, options)`. */
export interface InboxDrainOptions {
  /** How long to wait, in ms: past it `drain` rejects with `LockTimeoutError`. @default no limit */
  readonly waitMs?: number;
  /** Aborts the wait (rejects with `signal.reason`). @default none */
  readonly signal?: AbortSignal;
}

/** What `post` resolves to once the message is stored. */
export interface InboxPostResult {
  /** The message's place in its key's queue when stored: 1 is the next to be handled. */
  readonly position: number;
}

/** The options, checked, every default filled in. @internal */
export interface ResolvedInboxOptions<T> {
  readonly handler: InboxHandler<T> | undefined;
  readonly mode: InboxMode;
  readonly debounceMs: number;
  readonly maxBatch: number;
  readonly maxAttempts: number;
  readonly retryDelayMs: number;
  readonly ttlMs: number;
  readonly leaseMs: number;
  readonly concurrency: number;
  readonly maxPending: number;
  readonly maxMessageBytes: number;
  readonly recoverIntervalMs: number;
  readonly serialize: (message: T) => string;
  readonly deserialize: (stored: string) => T;
}

/** Redis's largest string is 512 MB; a message is kept well below it. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Checks `options` (the client's `leaseMs` where none is given). */
export function resolveInboxOptions<T>(options: unknown, clientLeaseMs: number): ResolvedInboxOptions<T> {
  const o = v.optionsObject('options', options) as InboxOptions<T>;
  const pick = <K extends keyof InboxOptions<T>>(k: K, fallback: number, check: (what: string, value: unknown) => number): number =>
    v.isDefault(o[k]) ? fallback : check(k, o[k]);
  if (!v.isDefault(o.handler)) v.fn('handler', o.handler);
  if (!v.isDefault(o.serialize)) v.fn('serialize', o.serialize);
  if (!v.isDefault(o.deserialize)) v.fn('deserialize', o.deserialize);
  const leaseMs = pick('leaseMs', clientLeaseMs, (w, x) => v.integerAtLeast(w, x, 10));
  return {
    handler: o.handler ?? undefined,
    mode: v.isDefault(o.mode) ? 'each' : v.oneOf('mode', o.mode, ['each', 'batch', 'debounce'] as const),
    debounceMs: pick('debounceMs', 1000, (w, x) => v.positiveInteger(w, x)),
    maxBatch: pick('maxBatch', 100, (w, x) => v.positiveInteger(w, x, 10_000)),
    maxAttempts: pick('maxAttempts', 5, (w, x) => v.positiveInteger(w, x, 1_000_000)),
    retryDelayMs: pick('retryDelayMs', 500, (w, x) => v.nonNegativeInteger(w, x, 60_000)),
    ttlMs: pick('ttlMs', 0, (w, x) => v.nonNegativeInteger(w, x)),
    leaseMs,
    concurrency: pick('concurrency', 16, (w, x) => v.positiveInteger(w, x, 100_000)),
    maxPending: pick('maxPending', 10_000, (w, x) => v.positiveInteger(w, x, 100_000_000)),
    maxMessageBytes: pick('maxMessageBytes', 1_048_576, (w, x) => v.positiveInteger(w, x, MAX_MESSAGE_BYTES)),
    recoverIntervalMs: pick('recoverIntervalMs', Math.max(1, Math.floor(leaseMs / 3)), (w, x) => v.positiveInteger(w, x)),
    serialize: o.serialize ?? ((message: T) => JSON.stringify(message)),
    deserialize: o.deserialize ?? ((stored: string) => JSON.parse(stored) as T),
  };
}

/** Checks `drain`'s options. */
export function resolveDrainOptions(options: unknown): { waitMs: number | undefined; signal: AbortSignal | undefined } {
  const o = v.optionsObject('options', options) as InboxDrainOptions;
  return { waitMs: v.isDefault(o.waitMs) ? undefined : v.nonNegativeInteger('waitMs', o.waitMs), signal: v.signal(o.signal) };
}
