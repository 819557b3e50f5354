import type { Waiters } from '../engine/waiters.js';
import type { ResolvedClientOptions } from '../options/options.js';
import type { RedisPort } from '../port/index.js';
import type { CallPolicy } from '../port/redis-call.js';
import type { ClaimEngine } from '../engine/renewed-claim.js';
import type { Replication } from '../scripts/index.js';

/**
 * What idempotency keys and flights use of their client's engine, named as
 * the engine names it: the port, pub/sub wake-ups, the renewed claim's needs.
 */
export interface ResultClaimEngine extends ClaimEngine {
  /** The user's Redis client, behind the port. */
  readonly redis: RedisPort;
  /** How every call is bounded and retried. */
  readonly policy: CallPolicy;
  /** Replica acknowledgements every claim, renewal and store needs (`minReplicas`), if any. */
  readonly replication: Replication | undefined;
  /** Pub/sub wake-ups, shared with every kind of the client. */
  readonly waiters: Waiters;
  /** The client's options (`prefix`, `leaseMs`). */
  readonly options: ResolvedClientOptions;
  /** The ioredis client's own `keyPrefix` ('' for none), put in front of channel names. */
  readonly keyPrefix: string;
  /** True once the client is closed. */
  isClosed(): boolean;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** The eviction check (and registration) still to be awaited before the first write, if any, bounded by `deadline` and `signal`. */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
}
