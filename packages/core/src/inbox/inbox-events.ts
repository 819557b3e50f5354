/** A handler call resolved: its messages are removed. */
export interface InboxHandledEvent {
  /** The key. */
  readonly key: string;
  /** How many messages the call had. */
  readonly count: number;
  /** Which call this was for them (1 unless retried). */
  readonly attempt: number;
  /** The processor's fencing token. */
  readonly token: number;
  /** How long the oldest of them waited, from its post to the call's start, in ms (server time). */
  readonly queueWaitMs: number;
  /** How long the call took, in ms. */
  readonly durationMs: number;
}

/** A handler call rejected; its messages are handed again after `delayMs`. */
export interface InboxRetriedEvent {
  /** The key. */
  readonly key: string;
  /** Which call rejected (1 for the first). */
  readonly attempt: number;
  /** What it rejected with. */
  readonly error: unknown;
  /** The delay before the next call, in ms. */
  readonly delayMs: number;
}

/** Why a message was dropped unhandled: its calls ran out, it was too old, or it cannot be read back. */
export type InboxDeadReason = 'attempts' | 'ttl' | 'malformed';

/** A message dropped without being handled. Never dropped without this event. */
export interface InboxDeadEvent<T> {
  /** The key. */
  readonly key: string;
  /** The message (undefined when `deserialize` threw: see `stored`). */
  readonly message: T | undefined;
  /** The message as stored. */
  readonly stored: string;
  /** Why it was dropped. */
  readonly reason: InboxDeadReason;
  /** Handler calls begun for it. */
  readonly attempts: number;
  /** The last call's error (`attempts`), or `deserialize`'s (`malformed`), when known in this process. */
  readonly error?: unknown;
}

/** This process became, or stopped being, a key's processor. */
export interface InboxProcessorEvent {
  /** The key. */
  readonly key: string;
  /** The processor's fencing token. */
  readonly token: number;
}

/** The processor of a key lost it (its lease) before it was done: its messages stay pending. */
export interface InboxLostEvent extends InboxProcessorEvent {
  /** Why (a `LockLostError`, or `ClientClosedError`). */
  readonly error: unknown;
}

/** The events of an inbox (eventemitter3: event name → listener arguments). */
export interface InboxEvents<T> {
  /** A handler call resolved. */
  handled: [event: InboxHandledEvent];
  /** A handler call rejected and will be retried. */
  retried: [event: InboxRetriedEvent];
  /** A message was dropped unhandled (`maxAttempts`, `ttlMs`, or unreadable). */
  dead: [event: InboxDeadEvent<T>];
  /** This process became a key's processor. */
  claimed: [event: InboxProcessorEvent];
  /** This process stopped being a key's processor (its queue was empty, or the inbox closed). */
  released: [event: InboxProcessorEvent];
  /** A key's processor here lost its lease: another process may take the key over. */
  lost: [event: InboxLostEvent];
  /** A background call failed (a Redis error while processing or recovering); it is tried again. */
  error: [error: unknown];
}
