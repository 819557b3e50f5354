/**
 * `@holdfast/core/internal`: the building blocks @holdfast/redlock and
 * @holdfast/watchdog share with this package (the owner model, the deadline
 * timer, pub/sub waiting, the Lua scripts and their replies, the call policy,
 * validation). Not for applications, and not covered by semver: anything here
 * may change in any release. The holdfast packages depend on each other with
 * matching versions, so they always agree on it.
 *
 * The public classes (errors, `Lease`) are re-exported here from the same
 * modules, so both entries share one copy of each: `instanceof` holds across
 * them.
 *
 * @internal
 * @packageDocumentation
 */
export * from './index.js';
export type { LeaseOps } from './lease/lease.js';
export { driftMarginMs, resolveAcquireOptions, resolveClientOptions, resolveCloseOptions } from './options/options.js';
export type { ResolvedAcquireOptions } from './options/options.js';
export { emitSafely } from './telemetry/events.js';
export { KeyCache, lockKeys, slotOf } from './keys/keys.js';
export { isServerReply, portOf, requirePort } from './port/index.js';
export type { RedisPort, PortCommand, PortNode, PortStatus, PipelineReplies, SubscriberPort, SubscriberHandlers, ClientKind } from './port/index.js';
export type { LockKeys } from './keys/keys.js';
export { runScript, runScriptReplicated, runScriptThen, defineScript } from './scripts/index.js';
export { scripts } from './internal-scripts.js';
export type { Replication, Script } from './scripts/index.js';
export { rwScripts } from './read-write/read-write-scripts.js';
export { semaphoreScripts } from './semaphore/semaphore-scripts.js';
export type { LockKind, KindCalls, EventKind } from './engine/kind.js';
export { MUTEX } from './mutex/mutex-kind.js';
export { takeWithLease } from './mutex/mutex-scripts.js';
export { takeCall } from './engine/acquire-loop.js';
export { takenLock, takenLockFields, takenPrefix } from './scripts/taken-lock.js';
export { semaphoreKeys } from './semaphore/semaphore-keys.js';
export type { SemaphoreKeys } from './semaphore/semaphore-keys.js';
export { electionKeys } from './election/election-keys.js';
export type { ElectionKeys } from './election/election-keys.js';
export { latchKeys } from './latch/latch-keys.js';
export { barrierKeys } from './barrier/barrier-keys.js';
export { idempotencyKeys, flightKeys } from './idempotency/claim-keys.js';
export { inboxKeys, inboxIndexes } from './inbox/inbox-keys.js';
export { planRenewal, RENEW_CHUNK } from './engine/renew.js';
export type { Renewable } from './engine/renew.js';
export { callRedis, isTransient, withTimeout } from './port/redis-call.js';
export { TimeoutQueue } from './port/timeout-queue.js';
export { onAbort } from './port/abort-listeners.js';
export type { QueuedTimeout } from './port/timeout-queue.js';
export { releaseArguments } from './engine/release.js';
export type { CallPolicy, CallLimits } from './port/redis-call.js';
export * as replies from './scripts/replies.js';
export * as validate from './options/validate.js';
export { Hold } from './engine/hold.js';
export { DeadlineTimer } from './engine/deadlines.js';
export { PinnedSet } from './engine/pinned-set.js';
export { HoldBook } from './engine/hold-book.js';
export type { OnHoldLost } from './engine/hold-book.js';
export type { Deadlined } from './engine/deadlines.js';
export { Waiters } from './engine/waiters.js';
export { Waiter } from './engine/waiter.js';
export { ServerCheck } from './engine/server-check.js';
export { watchConnection } from './engine/connection-epoch.js';
export type { ConnectionEpoch } from './engine/connection-epoch.js';
export { currentOwner, runOwning, randomId } from './engine/owner.js';
export type { OwnerRef } from './engine/owner.js';
export { CLIENT_ID_LENGTH, REGISTRATION_TTL_S, registrationKey, parseClientRecord } from './engine/client-registry.js';
export type { ClientRecord } from './engine/client-registry.js';
export { callerSignal, publishLost, traceAcquire, traceExtend, traceRelease, traceRenewal } from './telemetry/telemetry.js';
export type { TracedHold } from './telemetry/telemetry.js';
