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
export type { LeaseHost } from './lease.js';
export { driftMarginMs, resolveAcquireOptions, resolveClientOptions, resolveCloseOptions } from './options.js';
export type { ResolvedAcquireOptions } from './options.js';
export { emitSafely } from './events.js';
export { lockKeys, slotOf } from './keys.js';
export { isServerReply, portOf, requirePort } from './client/index.js';
export type { RedisPort, PortCommand, PortNode, PortStatus, PipelineReplies, SubscriberPort, SubscriberHandlers, ClientKind } from './client/index.js';
export type { LockKeys } from './keys.js';
export { scripts, runScript, runScriptReplicated, defineScript } from './scripts/index.js';
export type { Replication, Script } from './scripts/index.js';
export { rwScripts } from './scripts/rw.js';
export { semaphoreScripts } from './scripts/semaphore.js';
export type { LockKind, KindCalls, EventKind } from './lock-kind.js';
export { semaphoreKeys } from './semaphore/semaphore-keys.js';
export type { SemaphoreKeys } from './semaphore/semaphore-keys.js';
export { electionKeys } from './election/election-keys.js';
export type { ElectionKeys } from './election/election-keys.js';
export { planRenewal, RENEW_CHUNK } from './renew.js';
export type { Renewable } from './renew.js';
export { callRedis, isTransient, withTimeout } from './redis-call.js';
export { releaseArguments } from './release.js';
export type { CallPolicy, CallLimits } from './redis-call.js';
export * as replies from './replies.js';
export * as validate from './validate.js';
export { Hold } from './hold.js';
export { DeadlineTimer } from './deadlines.js';
export type { Deadlined } from './deadlines.js';
export { Waiters } from './waiters.js';
export { Waiter } from './waiter.js';
export { ServerCheck } from './server-check.js';
export { watchConnection } from './connection-epoch.js';
export type { ConnectionEpoch } from './connection-epoch.js';
export { currentOwner, runOwning, randomId } from './owner.js';
export type { OwnerRef } from './owner.js';
export { CLIENT_ID_LENGTH, REGISTRATION_TTL_S, registrationKey, parseClientRecord } from './client-registry.js';
export type { ClientRecord } from './client-registry.js';
export { callerSignal, publishLost, traceAcquire, traceExtend, traceRelease, traceRenewal } from './telemetry.js';
export type { TracedHold } from './telemetry.js';
