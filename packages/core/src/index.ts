// The public face of @holdfast/core: what applications call. Everything here
// follows semver, as does the key layout (`@holdfast/core/keys`,
// src/keys/public-keys.ts). What only @holdfast/redlock builds on is in
// `@holdfast/core/internal` (src/internal.ts), which does not.
export { LockClient } from './lock-client.js';
export { Lock } from './mutex/lock.js';
export { ReadWriteLock } from './read-write/read-write-lock.js';
export { Lease } from './lease/lease.js';
export { MultiLock } from './multi-lock/multi-lock.js';
export { MultiLease } from './multi-lock/multi-lease.js';
export { Semaphore, PermitLease } from './semaphore/semaphore.js';
export type { SemaphoreOptions, PermitAcquireOptions, PermitTryAcquireOptions } from './semaphore/semaphore-options.js';
export type { RunOnceOptions, RunOnceClaim, RunOnceResult, RunCoordinatorLike } from './run-once/run-once-options.js';
export { Idempotency } from './idempotency/idempotency.js';
export type {
  IdempotencyOptions,
  IdempotencyRunOptions,
  IdempotencyClaim,
  IdempotencyResult,
  IdempotencyRecord,
} from './idempotency/idempotency-options.js';
export type { SingleFlightOptions, FlightClaim } from './idempotency/single-flight.js';
export { IdempotencyInProgressError, IdempotencyConflictError, ResultValueError, SingleFlightError, type FlightErrorData } from './idempotency/claim-errors.js';
export { Inbox } from './inbox/inbox.js';
export type { InboxOptions, InboxMode, InboxHandler, InboxTurn, InboxDrainOptions, InboxPostResult } from './inbox/inbox-options.js';
export { InboxFullError, InboxMessageError } from './inbox/inbox-errors.js';
export type {
  InboxEvents,
  InboxHandledEvent,
  InboxRetriedEvent,
  InboxDeadEvent,
  InboxDeadReason,
  InboxProcessorEvent,
  InboxLostEvent,
} from './inbox/inbox-events.js';
export { CountDownLatch } from './latch/latch.js';
export type { CountDownLatchOptions } from './latch/latch-options.js';
export type { SyncWaitOptions } from './options/options.js';
export type { CountedDownEvent } from './latch/latch-calls.js';
export { Barrier, type BarrierState } from './barrier/barrier.js';
export type { BarrierOptions, ArriveOptions } from './barrier/barrier-options.js';
export type { Arrival } from './barrier/barrier-party.js';
export { BarrierBrokenError, PartyCountMismatchError, type BarrierBrokenReason } from './barrier/barrier-errors.js';
export type { TrippedEvent, BrokenEvent } from './barrier/barrier-calls.js';
export type { SyncMessage, InboxMessage } from './telemetry/kind-channels.js';
export { Election } from './election/election.js';
export { Term, LeadershipLostError } from './election/term.js';
export type { Leader } from './election/election-calls.js';
export type { ElectionOptions, CampaignOptions, ObserveOptions } from './election/election-options.js';
export {
  HoldfastError,
  isHoldfastError,
  InvalidArgumentError,
  UnsupportedClientError,
  LockTimeoutError,
  LockNotHeldError,
  LockLostError,
  LockReentryError,
  ClientClosedError,
  RedisTimeoutError,
  RedisCommandError,
  PubSubRefusedError,
  RedisUnreachableError,
  ReplicationError,
  KeyConflictError,
  EvictionPolicyError,
  LockUpgradeError,
} from './errors/errors.js';
export { MultiLockReleaseError } from './multi-lock/multi-lease.js';
export { PermitCountMismatchError } from './semaphore/semaphore-calls.js';
export type { HoldfastErrorCode, KeyConflictKind, LostReason } from './errors/errors.js';
export type {
  LockClientOptions,
  AcquireOptions,
  TryAcquireOptions,
  WithLockOptions,
  CloseOptions,
  ResolvedClientOptions,
  EvictionCheck,
  WaitMode,
} from './options/options.js';
export type { LockClientEvents } from './lock-client.js';
export { emitSafely, type AcquiredEvent, type ReleasedEvent, type ExtendedEvent, type LostEvent } from './telemetry/events.js';
export type { RenewalHold, RenewalResult, RenewalTarget, Renewer } from './options/renewal.js';
export { fencedWrite, readFenced, type FencedValue, type FencedWriteOptions } from './fencing/fencing.js';
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
  BunRedisClientLike,
} from './port/redis-like.js';
export type { LockLike, LeaseLike } from './options/options.js';
export { MAX_DURATION_MS, MAX_NAME_BYTES } from './options/validate.js';
export * as validate from './options/checks.js';
export { TELEMETRY_CHANNELS } from './telemetry/telemetry.js';
export type {
  TelemetryKind,
  AcquireMessage,
  ReleaseMessage,
  ExtendMessage,
  RenewalMessage,
  LostMessage,
} from './telemetry/telemetry.js';
