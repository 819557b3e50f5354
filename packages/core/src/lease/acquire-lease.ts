import { performance } from 'node:perf_hooks';
import { LockNotHeldError, LockUpgradeError } from '../errors/errors.js';
import type { Engine } from '../engine/engine.js';
import { grantHold, type GrantTarget } from '../engine/grant.js';
import { currentOwner, runOwning, type OwnerRef } from '../engine/owner.js';
import { resolveAcquireOptions } from '../options/options.js';
import * as validate from '../options/validate.js';
import { callerSignal, telemetryKind, traceAcquire } from '../telemetry/telemetry.js';
import { Lease, holdOf } from './lease.js';
import { disposeTraced, engineLeaseOps, reenterHold } from './lease-ops.js';

/**
 * The reentrant acquisition of a lock (a mutex, a side of a read-write lock,
 * a part of a multi-lock): a re-entry inside `withLock` of the same lock, a
 * downgrade inside the write side's, else a new hold. Traced.
 */
export function acquireLease(
  engine: Engine,
  lock: GrantTarget,
  options: unknown,
  mode: 'wait' | 'try',
  group?: readonly string[],
): Promise<Lease | null> {
  return traceAcquire(
    () => ({ name: lock.name, kind: telemetryKind(lock), mode, clientId: engine.clientId, signal: callerSignal(options) }),
    () => acquireNow(engine, lock, options, mode, group),
    holdOf,
  );
}

function acquireNow(engine: Engine, lock: GrantTarget, options: unknown, mode: 'wait' | 'try', group?: readonly string[]): Promise<Lease | null> {
  try {
    engine.assertOpen();
    const opts = resolveAcquireOptions(options);
    const started = performance.now();
    // Only a withLock frame of this lock (and this client) makes this chain an
    // owner; a bare acquire() is a new owner every time (see owner.ts).
    const ref = currentOwner(engine.scopeKey(lock.name, lock.kind.role));
    if (ref) return reenterNow(engine, lock, ref.owner, opts.leaseMs, started);
    const via = downgradeVia(engine, lock);
    const target = via === undefined && group === undefined ? lock : { ...lock, via, group };
    return grantHold(engine, target, opts, mode, started, (hold) => {
      // The waited time is read only when someone listens (the payload is built at once then).
      engine.emitLazily('acquired', () =>
        hold.eventPayload({ name: lock.name, token: hold.token, holdCount: hold.count, waitedMs: Math.round(performance.now() - started), reentrant: false }),
      );
      return new Lease(engineLeaseOps(engine), hold, hold.count);
    });
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A re-entry within the caller's enclosing hold (`withLock`): one more count on that hold. */
async function reenterNow(engine: Engine, lock: GrantTarget, owner: string, leaseMs: number | undefined, started: number): Promise<Lease> {
  const held = engine.holds.find(owner, lock.name);
  if (!held) throw new LockNotHeldError(lock.name, 'the enclosing hold has ended');
  return new Lease(engineLeaseOps(engine), held, await reenterHold(engine, held, leaseMs, started));
}

/**
 * The enclosing holds of the other side of a read-write lock: a read inside
 * this chain's write hold is a downgrade (granted at once, on the writer's
 * owner id); a write inside its read hold would wait for itself.
 */
function downgradeVia(engine: Engine, lock: GrantTarget): string | undefined {
  const role = lock.kind.role;
  if (role === 'read') return currentOwner(engine.scopeKey(lock.name, 'write'))?.owner;
  if (role === 'write' && currentOwner(engine.scopeKey(lock.name, 'read'))) throw new LockUpgradeError(lock.name);
  return undefined;
}

/**
 * `lock.withLock(fn)`: runs `fn` holding the lock, as its owner (calls made
 * from inside `fn` re-enter), and releases it afterwards.
 */
export async function withLease<T>(engine: Engine, lock: GrantTarget, fn: (lease: Lease) => Promise<T> | T, options: unknown): Promise<T> {
  validate.fn('fn', fn);
  const lease = (await acquireLease(engine, lock, options, 'wait'))!;
  const hold = holdOf(lease);
  const ref: OwnerRef = { owner: hold.owner, isActive: () => hold.active };
  return runWithLease(engine, lease, () => runOwning(engine.scopeKey(lock.name, lock.kind.role), ref, () => fn(lease)));
}

/**
 * The end of every `withLock`: runs `run` and releases `lease` afterwards,
 * whatever `run` does. Lenient: `run` may have released its own lease. A loss
 * is still an error, and so is a close() while `run` ran (the signal's reason
 * says which): the work was not exclusive.
 */
export async function runWithLease<T>(engine: Engine, lease: Lease, run: () => Promise<T> | T): Promise<T> {
  const hold = holdOf(lease);
  let result: T;
  try {
    result = await run();
  } catch (error) {
    await disposeTraced(engine, lease, hold).catch((releaseError: unknown) => engine.onError(releaseError));
    throw error;
  }
  await disposeTraced(engine, lease, hold);
  if (hold.lostError) throw hold.abortReason ?? hold.lostError;
  return result;
}
