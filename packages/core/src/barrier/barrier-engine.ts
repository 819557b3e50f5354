import type { RedisPort } from '../port/index.js';
import type { BarrierEvents } from './barrier-events.js';
import type { ResolvedClientOptions } from '../options/options.js';
import type { CallPolicy } from '../port/redis-call.js';
import type { Renewer } from '../options/renewal.js';
import type { Waiters } from '../engine/waiters.js';

/**
 * What a barrier uses of its client's engine, and nothing more: the members
 * are named as the engine names them, so the client's adapter (one object,
 * built in LockClient) can be replaced by the engine itself.
 */
export interface BarrierEngine {
  /** The user's Redis client, behind the port. */
  readonly redis: RedisPort;
  /** How every call is bounded and retried. */
  readonly policy: CallPolicy;
  /** Pub/sub wake-ups, shared with every kind of the client. */
  readonly waiters: Waiters;
  /** The client's id: the start of every party id it makes. */
  readonly clientId: string;
  /** The client's options, every default filled in (`leaseMs`, `commandTimeoutMs`, `retries` are read). */
  readonly options: ResolvedClientOptions;
  /** Time kept back from a lease of `ms` for clock drift. */
  marginMs(ms: number): number;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** True once the client is closed. */
  isClosed(): boolean;
  /**
   * The eviction check (and registration) still to be awaited before the first write, if any;
   * `deadline` (monotonic ms) and `signal` bound this caller's wait for it (see Engine.serverReady).
   */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
  /** The attached watchdog, if any (its `timeoutMs` is a party's default lease). */
  renewer(): Renewer | undefined;
  /** Calls `listener` at the start of the client's `close()`; returns the function that unregisters it. */
  onClose(listener: () => void): () => void;
  /** Emits `event` with the payload `build` returns, built only when someone listens; never throws. */
  emitLazily<K extends keyof BarrierEvents>(event: K, build: () => BarrierEvents[K][0]): void;
  /** Reports a background failure (the `error` event). */
  onError(error: unknown): void;
}
