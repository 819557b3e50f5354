import type { SyncKind } from './state-keys.js';

/** One holder of a lock, a side of a read-write lock or a semaphore's permits. */
export interface Holder {
  /** The owner id stored in Redis (its first 8 characters: the client id). */
  readonly owner: string;
  /** Its client, for people: the client's `name`, host and pid when it registered, else `client <id>`. */
  readonly client: string;
  /** `read` / `write` for a read-write lock's holder. */
  readonly side?: 'read' | 'write';
  /** Reentrant holds of this owner (1 for a semaphore's). */
  readonly holds: number;
  /** Semaphore only: the permits this holder has. */
  readonly permits?: number;
  /** The hold's fencing token. */
  readonly token: number;
  /** The lease left, in ms, by the server's clock (not the lease's full length, which Redis does not keep). */
  readonly remainingMs: number;
  /** True while a hand-off to this holder is unconfirmed (the lock's `@c` field). */
  readonly handoffUnconfirmed: boolean;
  /** Election only: the leader's published value (absent while a hand-off is unconfirmed). */
  readonly value?: string;
}

/** One queued acquisition, in queue order. */
export interface QueuedWaiter {
  /** The waiter's request id (its field in the waiter table). */
  readonly requestId: string;
  /** Its owner id. */
  readonly owner: string;
  /** Its client (as `Holder.client`). */
  readonly client: string;
  /** `read` / `write` for a read-write lock's waiter. */
  readonly side?: 'read' | 'write';
  /** Semaphore only: the permits asked for. */
  readonly permits?: number;
  /** How long the entry stays valid without being refreshed, in ms (by the server's clock). */
  readonly expiresInMs: number;
}

/** One lock, read-write lock or semaphore as Redis holds it now. */
export interface LockState {
  /** Its name (bytes that are not UTF-8 as U+FFFD: see `nameHex`). */
  readonly name: string;
  /** Only for a name that is not UTF-8: its exact bytes, in hex. */
  readonly nameHex?: string;
  /** Its kind. */
  readonly kind: SyncKind;
  /** Its main key (as `name`, bytes that are not UTF-8 as U+FFFD). */
  readonly key: string;
  /** True when the key holds data holdfast did not write. */
  readonly foreign: boolean;
  /** Live holders. */
  readonly holders: readonly Holder[];
  /** The queue, head first. */
  readonly waiters: readonly QueuedWaiter[];
  /** Semaphore only: the stored permit count. */
  readonly permits?: number;
  /** Latch only: the count (0: open). */
  readonly count?: number;
  /** Latch: how long its keys stay without a change; idempotency key and flight: how long the stored result stays (ms, by the server's clock). */
  readonly expiresInMs?: number;
  /** Barrier only: the stored party count. */
  readonly parties?: number;
  /** Barrier only: the generation its next trip returns. */
  readonly generation?: number;
  /**
   * Idempotency key and flight only: `running` (its holder runs `fn`), `done` (its result is stored,
   * kept `expiresInMs`) or `failed` (a flight's error, kept for the callers that joined it).
   */
  readonly result?: 'running' | 'done' | 'failed';
  /** Idempotency key and flight only: the fencing token of the claim that ran (or runs) `fn`. */
  readonly token?: number;
  /** Idempotency key only: the fingerprint its first call gave, when it gave one. */
  readonly fingerprint?: string;
}

/** Pipelined replies, as `values` reads them. */
export type Row = [Error | null, unknown][];

/** Reads the pipelined replies: the value of each, an error reply as `undefined` (a foreign key's WRONGTYPE). */
export function values(rows: Row | null): unknown[] {
  return (rows ?? []).map(([error, value]) => (error ? undefined : value));
}

export function pairs(flat: unknown): [string, string][] {
  if (!flat || typeof flat !== 'object') return [];
  return Object.entries(flat as Record<string, string>);
}
