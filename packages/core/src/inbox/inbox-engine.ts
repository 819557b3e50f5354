import type { ClaimEngine } from '../engine/renewed-claim.js';
import type { Waiters } from '../engine/waiters.js';
import type { ResolvedClientOptions } from '../options/options.js';
import type { ScriptCaller } from '../scripts/index.js';

/**
 * What an inbox uses of its client's engine: a renewed claim's view (its
 * processors hold one each) and a script caller's, plus pub/sub wake-ups for
 * `drain`. Members are named as the engine names them.
 */
export interface InboxEngine extends ClaimEngine, ScriptCaller {
  /** The client's options (`prefix`, `leaseMs`). */
  readonly options: ResolvedClientOptions;
  /** The user client's own key prefix (ioredis `keyPrefix`), which channel names carry. */
  readonly keyPrefix: string;
  /** Pub/sub wake-ups, shared with every kind of the client. */
  readonly waiters: Waiters;
  /** True once the client is closed. */
  isClosed(): boolean;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** The eviction check (and registration) still to be awaited before the first write, if any. */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
}
