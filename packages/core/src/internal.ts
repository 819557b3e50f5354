/**
 * `@holdfast/core/internal`: what @holdfast/redlock builds on (the owner
 * model, holds and their book, the deadline timer, pub/sub waiting, the
 * mutex's scripts and their replies, the call policy, validation), and
 * nothing else: every name here is one packages/redlock/src imports. Not for
 * applications or other packages, and not covered by semver: anything here
 * may change in any release; Redlock depends on the matching version of core.
 * Applications use `@holdfast/core`; tools that read keys use
 * `@holdfast/core/keys`.
 *
 * @internal
 * @packageDocumentation
 */
export type { LeaseOps } from './lease/lease.js';
export { driftMarginMs, resolveAcquireOptions, resolveCloseOptions, type ResolvedAcquireOptions } from './options/options.js';
export { emitSafely } from './telemetry/events.js';
export { lockKeys, type LockKeys } from './keys/keys.js';
export { isServerReply, requirePort, type RedisPort } from './port/index.js';
export { runScript, defineScript, type Script } from './scripts/index.js';
export { MUTEX, lockFragments, releaseArguments, releaseTakenReply, scripts, takeCall } from './mutex/mutex-calls.js';
export { planRenewal } from './engine/renew.js';
export { callRedis, withTimeout } from './port/redis-call.js';
export { TimeoutQueue, type QueuedTimeout } from './port/timeout-queue.js';
export { onAbort } from './port/abort-listeners.js';
export * as replies from './scripts/replies.js';
export * as validate from './options/validate.js';
export { Hold } from './engine/hold.js';
export { HoldBook } from './engine/hold-book.js';
export { Waiters } from './engine/waiters.js';
export type { Waiter } from './engine/waiter.js';
export { ServerCheck } from './engine/server-check.js';
export { watchConnection, type ConnectionEpoch } from './engine/connection-epoch.js';
export { currentOwner, runOwning, randomId, type OwnerRef } from './engine/owner.js';
export { callerSignal, publishLost, traceAcquire, traceExtend, traceRelease, traceRenewal } from './telemetry/telemetry.js';
