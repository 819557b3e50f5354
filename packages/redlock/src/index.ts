export { Redlock } from './redlock.js';
export { RedlockLock } from './lock.js';
export { RedlockLease } from './lease.js';
export { QuorumError } from './errors.js';
export type { InstanceOutcome, QuorumOperation, QuorumFailure, QuorumErrorDetails, RedlockErrorCode } from './errors.js';
export type { RedlockOptions, ResolvedRedlockOptions } from './options.js';
export type { RedlockEvents, RedlockAcquiredEvent } from './events.js';
export { quorumOf, validityMs, isUsable, fencingToken } from './quorum.js';
// The same errors and option types as @holdfast/core, so one import suffices.
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
} from '@holdfast/core';
export type {
  AcquireOptions,
  TryAcquireOptions,
  WithLockOptions,
  CloseOptions,
  LockLike,
  LeaseLike,
  LostReason,
  ReleasedEvent,
  ExtendedEvent,
  LostEvent,
} from '@holdfast/core';
