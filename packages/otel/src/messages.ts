/**
 * The diagnostics_channel names and message shapes of @holdfast/core (its
 * README, "Telemetry"), restated by shape: this package subscribes by name
 * and depends on `@opentelemetry/api` only, so any copy of @holdfast/core in
 * the process (ESM or CommonJS, any version with these channels) is observed.
 */
export const CHANNELS = {
  acquire: 'holdfast:acquire',
  release: 'holdfast:release',
  extend: 'holdfast:extend',
  renewal: 'holdfast:renewal',
  lost: 'holdfast:lost',
  /** Latch and barrier operations. */
  sync: 'holdfast:sync',
  /** Inbox outcomes (a plain channel). */
  inbox: 'holdfast:inbox',
} as const;

/** What every message says of the lock. */
export interface LockMessage {
  readonly name: string;
  readonly kind: string;
}

export interface AcquireMessage extends LockMessage {
  readonly mode: 'wait' | 'try';
  result?: { readonly token: number; readonly holdCount?: number } | null;
  error?: unknown;
  /**
   * The caller's `signal`, when the context names it (core's does not yet):
   * with it an abort is told from a failure whatever its reason.
   */
  readonly signal?: unknown;
}

export interface ReleaseMessage extends LockMessage {
  readonly token: number;
  readonly final: boolean;
  /** Undefined for a hold granted while nobody subscribed. */
  readonly heldMs: number | undefined;
  /** The context of the traced acquisition that granted the hold, when there was one. */
  readonly acquire: object | undefined;
  error?: unknown;
}

export interface ExtendMessage extends LockMessage {
  readonly token: number;
  readonly leaseMs: number;
  error?: unknown;
}

export interface RenewalMessage {
  readonly holds: number;
  result?: readonly { readonly status: string }[];
  error?: unknown;
}

export interface LostMessage extends LockMessage {
  readonly token: number;
  readonly reason: string;
  readonly heldMs: number | undefined;
  readonly acquire: object | undefined;
}

/** One operation of a count-down latch or a barrier (`holdfast:sync`). */
export interface SyncMessage extends LockMessage {
  /** `trySetCount`, `countDown`, `wait`, `countDownAndWait` or `arrive`. */
  readonly operation: string;
  result?: unknown;
  error?: unknown;
  readonly signal?: unknown;
}

/** One outcome of an inbox (`holdfast:inbox`): `handled`, `retried` or `dead`. */
export interface InboxMessage extends LockMessage {
  readonly outcome: string;
  readonly count: number;
  readonly attempt: number;
  /** `handled`: ms from the first message's post to the call's start. */
  readonly queueWaitMs?: number;
  /** `handled`: ms the handler call took. */
  readonly durationMs?: number;
  /** `dead`: why (`ttl`, `attempts`, `malformed`). */
  readonly reason?: string;
}

/** An error's `code` (holdfast's errors have one), or undefined. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
