// The public face of @holdfast/core: what applications call. Everything here
// follows semver. The building blocks shared with @holdfast/redlock and
// @holdfast/watchdog live in `@holdfast/core/internal` (src/internal.ts),
// which does not.
export { LockClient } from './lock-client.js';
export { Lock } from './lock.js';
export { ReadWriteLock } from './read-write-lock.js';
export { Lease } from './lease.js';
export { MultiLock } from './multi-lock.js';
export { MultiLease } from './multi-lease.js';
export { Semaphore } from './semaphore/semaphore.js';
export { PermitLease } from './semaphore/permit-lease.js';
export type { SemaphoreOptions, PermitAcquireOptions, PermitTryAcquireOptions } from './semaphore/semaphore-options.js';
export { Election } from './election/election.js';
export { Term } from './election/term.js';
export { LeadershipLostError } from './election/election-errors.js';
export type { Leader } from './election/election-calls.js';
export type { ElectionOptions, CampaignOptions, ObserveOptions } from './election/election-options.js';
export {
  HoldfastError,
  isHoldfastError,
  InvalidArgumentError,
  LockTimeoutError,
  LockNotHeldError,
  LockLostError,
  LockReentryError,
  ClientClosedError,
  RedisTimeoutError,
  RedisCommandError,
  RedisUnreachableError,
  ReplicationError,
  KeyConflictError,
  EvictionPolicyError,
  MultiLockReleaseError,
  LockUpgradeError,
  PermitCountMismatchError,
} from './errors.js';
export type { HoldfastErrorCode, LostReason } from './errors.js';
export type {
  LockClientOptions,
  AcquireOptions,
  TryAcquireOptions,
  WithLockOptions,
  CloseOptions,
  ResolvedClientOptions,
  EvictionCheck,
} from './options.js';
export type { LockClientEvents, AcquiredEvent, ReleasedEvent, ExtendedEvent, LostEvent } from './events.js';
export type { RenewalHold, RenewalResult, RenewalTarget, Renewer } from './renewal.js';
export { fencedWrite, readFenced } from './fencing.js';
export type { FencedValue, FencedWriteOptions } from './fencing.js';
export type {
  RedisLike,
  RedisClientLike,
  RedisClusterLike,
  RedisCommandsLike,
  RedisPipelineLike,
  RedisEventListener,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  NodeRedisSentinelLike,
} from './redis-like.js';
export type { LockLike, LeaseLike } from './types.js';
export { MAX_DURATION_MS, MAX_NAME_BYTES } from './validate.js';
export { TELEMETRY_CHANNELS } from './telemetry.js';
export type {
  TelemetryKind,
  AcquireMessage,
  ReleaseMessage,
  ExtendMessage,
  RenewalMessage,
  LostMessage,
} from './telemetry.js';
