export { LockClient } from './lock-client.js';
export { Lock } from './lock.js';
export { Lease } from './lease.js';
export { Semaphore } from './semaphore/semaphore.js';
export { PermitLease } from './semaphore/permit-lease.js';
export type { SemaphoreOptions, PermitAcquireOptions, PermitTryAcquireOptions } from './semaphore/semaphore-options.js';
export { semaphoreKeys } from './semaphore/semaphore-keys.js';
export type { SemaphoreKeys } from './semaphore/semaphore-keys.js';
export type { LeaseHost } from './lease.js';
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
  ReplicationError,
  KeyConflictError,
  EvictionPolicyError,
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
export { driftMarginMs } from './options.js';
export type { LockClientEvents, AcquiredEvent, ReleasedEvent, ExtendedEvent, LostEvent, SynchronizerKind } from './events.js';
export { emitSafely } from './events.js';
export type { RenewalHold, RenewalResult, RenewalTarget, Renewer } from './renewal.js';
export { fencedWrite, readFenced } from './fencing.js';
export type { FencedWriteOptions } from './fencing.js';
export { keyPrefixOf, lockKeys, slotOf } from './keys.js';
export type { LockKeys } from './keys.js';
export { scripts, runScript, runScriptReplicated, defineScript, isCluster } from './scripts/index.js';
export type { Replication } from './scripts/index.js';
export { planRenewal, RENEW_CHUNK } from './renew.js';
export type { Renewable } from './renew.js';
export type { RedisLike, Script } from './scripts/index.js';
export { callRedis, isTransient, withTimeout } from './redis-call.js';
export type { CallPolicy, CallLimits } from './redis-call.js';
export * as replies from './replies.js';
export { MAX_DURATION_MS, MAX_NAME_BYTES } from './validate.js';

// Building blocks shared with @holdfast/redlock (same owner model, same
// deadline timer, same pub/sub waiting). Applications do not need them.
export { Hold } from './hold.js';
export type { HoldOps } from './hold.js';
export { DeadlineTimer } from './deadlines.js';
export type { Deadlined } from './deadlines.js';
export { Waiters } from './waiters.js';
export { Waiter } from './waiter.js';
export { ServerCheck } from './server-check.js';
export { watchConnection } from './connection-epoch.js';
export type { ConnectionEpoch } from './connection-epoch.js';
export { currentOwner, runOwning, randomId } from './owner.js';
export type { OwnerRef } from './owner.js';
export { resolveAcquireOptions, resolveClientOptions, resolveCloseOptions } from './options.js';
export type { ResolvedAcquireOptions } from './options.js';
export * as validate from './validate.js';
export type { LockLike, LeaseLike } from './types.js';
