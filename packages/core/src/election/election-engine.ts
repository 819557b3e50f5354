import type { AcquireContext } from '../engine/kind.js';
import type { LeaseEvents } from '../telemetry/events.js';
import type { Hold } from '../engine/hold.js';
import type { HoldBook } from '../engine/hold-book.js';
import type { ResolvedClientOptions } from '../options/options.js';
import type { Renewer } from '../options/renewal.js';

/**
 * What an election needs from the client it came from: the acquisition
 * context every kind shares (Redis, call policy, pub/sub waiters, hand-off
 * timing, `minReplicas`, cancel), plus the client's books that a term, like a
 * lease, is kept in (deadline timer, watchdog, close()).
 */
export interface ElectionEngine extends AcquireContext {
  /** The client's id: the start of every owner id it makes. */
  readonly clientId: string;
  /** The client's options, every default filled in (`leaseMs`: a term's default without a watchdog). */
  readonly options: ResolvedClientOptions;
  /** The client's `driftFactor`: a term is reported lost `termMs × driftFactor + 2` ms before it ends on the server. */
  readonly driftFactor: number;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /**
   * The eviction check (and registration) still to be awaited before the first write, if any;
   * `deadline` (monotonic ms) and `signal` bound this caller's wait for it (see Engine.serverReady).
   */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
  /** Emits the event with the payload `build` returns, built only when someone listens. */
  emitLazily<K extends 'acquired' | 'released' | 'lost'>(event: K, build: () => LeaseEvents[K][0]): void;
  /** The attached watchdog, if any. */
  renewer(): Renewer | undefined;
  /** Calls `listener` at the start of close(); returns a function that unregisters it. */
  onClose(listener: () => void): () => void;
  /** Counts the user client's reconnections: a change during a call means it may have been resent. */
  connectionEpoch(): number;
  /** The client's live holds, a term kept among them as a lease is (deadline timer, watchdog, loss, close()). */
  readonly holds: Pick<HoldBook<Hold>, 'add' | 'end' | 'deadlineMoved' | 'markLost' | 'sweepExpired'>;
}
