export { LockClient } from './lock-client.js';
export { Lock } from './lock.js';
export { Lease } from './lease.js';
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
} from './errors.js';
export type { HoldfastErrorCode, LostReason } from './errors.js';
export type {
  LockClientOptions,
  AcquireOptions,
  TryAcquireOptions,
  WithLockOptions,
  CloseOptions,
  ResolvedClientOptions,
} from './options.js';
export { driftMarginMs } from './options.js';
export type { LockClientEvents, AcquiredEvent, ReleasedEvent, ExtendedEvent, LostEvent } from './events.js';
export { emitSafely } from './events.js';
export type { RenewalHold, RenewalResult, RenewalTarget, Renewer } from './renewal.js';
export { fencedWrite, readFenced } from './fencing.js';
export type { FencedWriteOptions } from './fencing.js';
export { lockKeys, slotOf } from './keys.js';
export type { LockKeys } from './keys.js';
export { scripts, runScript } from './scripts/index.js';
export type { RedisLike, Script } from './scripts/index.js';
export { callRedis, isTransient, withTimeout } from './redis-call.js';
export type { CallPolicy, CallLimits } from './redis-call.js';
export * as replies from './replies.js';
export { MAX_DURATION_MS, MAX_NAME_BYTES } from './validate.js';
