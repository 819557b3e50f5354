/**
 * The repository's own view of core, for its tests and bench: the public API,
 * the key layout, what Redlock builds on, and the internals tests call
 * directly (scripts, the port, key hashing). Not an entry of the package
 * (neither in package.json `exports` nor built): vitest and the test
 * tsconfigs map `@holdfast/core/workspace` here, and nothing published
 * imports it.
 *
 * @internal
 */
export * from './index.js';
export * from './keys/public-keys.js';
export * from './internal.js';
// Redlock's `validate` (every check) over the public one (a few of them).
export { validate } from './internal.js';
// The one-letter-typed builder Redlock and the scripts' tests use; public code calls
// lockKeys / readWriteLockKeys of `@holdfast/core/keys`.
export { lockKeys, slotOf } from './keys/keys.js';
export { portOf, type SubscriberPort } from './port/index.js';
export { isTransient } from './port/redis-call.js';
export { runScriptReplicated } from './scripts/index.js';
export { rwScripts } from './read-write/read-write-lock.js';
export { semaphoreScripts } from './semaphore/semaphore-calls.js';
export { RENEW_CHUNK } from './engine/renew.js';
export { takenLockFields, takenPrefix } from './mutex/taken-lock.js';
export { fencedWriteScript } from './fencing/fencing.js';
export { multiAcquireScript } from './multi-lock/multi-acquire.js';
