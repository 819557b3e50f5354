import type { RedisPort } from '../port/index.js';
import type { LeaseEvents } from '../telemetry/events.js';
import type { ResolvedClientOptions } from '../options/options.js';
import type { CallPolicy } from '../port/redis-call.js';
import type { Replication } from '../scripts/index.js';

/**
 * What run-once claims need from their client: a narrow view of the client's
 * engine, named as the engine names its members.
 */
export interface RunOnceEngine {
  /** The user's Redis client, behind the port. */
  readonly redis: RedisPort;
  /** How every call is bounded and retried. */
  readonly policy: CallPolicy;
  /** Replica acknowledgements every granting write needs (`minReplicas`), if any. */
  readonly replication: Replication | undefined;
  /** The client's id: the start of every owner id it makes. */
  readonly clientId: string;
  /** The client's options (`prefix`, `leaseMs`). */
  readonly options: ResolvedClientOptions;
  /** Time kept back from a claim of `ms` for clock drift. */
  marginMs(ms: number): number;
  /** True once the client is closed. */
  isClosed(): boolean;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** The eviction check (and registration) still to be awaited before the first write, if any. */
  serverReady(): Promise<void> | undefined;
  /** Emits an event to the client's listeners, never throwing. */
  emit<K extends keyof LeaseEvents>(event: K, ...args: LeaseEvents[K]): void;
  /** Emits `event` with the payload `build` returns, built only when someone listens. */
  emitLazily<K extends 'acquired' | 'lost'>(event: K, build: () => LeaseEvents[K][0]): void;
  /** Calls `listener` at the start of the client's `close()`; returns the function that unregisters it. */
  onClose(listener: () => void): () => void;
}
