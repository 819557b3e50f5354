import { performance } from 'node:perf_hooks';
import type { Engine } from '../engine/engine.js';
import { acquireLease } from '../lease/acquire-lease.js';
import { engineLeaseOps } from '../lease/lease-ops.js';
import { Lease, holdOf } from '../lease/lease.js';
import { MUTEX } from '../mutex/mutex-calls.js';
import { ClientClosedError, LockTimeoutError } from '../errors/errors.js';
import { Hold } from '../engine/hold.js';
import { serverCheckFailure } from '../engine/server-check.js';
import { acquireGroup, cancelGroup } from './multi-acquire.js';
import { MultiLease, partHolds } from './multi-lease.js';
import { TakenParts } from './multi-parts.js';
import { resolveAcquireOptions, type AcquireOptions, type ResolvedAcquireOptions, type TryAcquireOptions, type WithLockOptions } from '../options/options.js';
import { currentOwner, randomId } from '../engine/owner.js';
import { telemetryKind, traceAcquireAll } from '../telemetry/telemetry.js';
import * as validate from '../options/validate.js';
import { newLock, type Lock } from '../mutex/lock.js';

/**
 * Several locks taken as one: every name or none (`client.multiLock(names)`).
 *
 * Each name is an ordinary lock (the keys of `client.lock(name)`), so a plain
 * lock and a multi-lock on the same name exclude each other. Names whose keys
 * share a hash slot are taken by one script call, atomically. Groups of
 * different slots are taken one after another in one global order (by slot,
 * then name); a group waits holding the groups before it, never a part of its
 * own, so two multi-locks over overlapping names never deadlock. A group that
 * fails or times out gives back every group taken before it. Groups taken
 * early are renewed while a later one is waited for; if one is lost anyway
 * (the server froze past its lease), everything is given back and the
 * acquisition starts again. A lease is handed out only with every part held
 * and its full lease ahead (see multi-parts.ts); when the connection closed
 * meanwhile, every part is confirmed first (a server restarted empty forgets
 * the groups taken before).
 *
 * @hideconstructor
 */
export class MultiLock {
  readonly #engine: Engine;
  readonly #locks: readonly Lock[];
  /** Groups of one hash slot each, in the global order. */
  readonly #groups: readonly (readonly Lock[])[];
  /** The names, as given (a name given twice appears once). */
  readonly names: readonly string[];

  /** @internal */
  constructor(engine: Engine, locks: readonly Lock[]) {
    this.#engine = engine;
    this.#locks = locks;
    this.names = locks.map((lock) => lock.name);
    const bySlot = new Map<number, Lock[]>();
    for (const lock of [...locks].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      let group = bySlot.get(lock.keys.slot);
      if (!group) bySlot.set(lock.keys.slot, (group = []));
      group.push(lock);
    }
    this.#groups = [...bySlot].sort(([a], [b]) => a - b).map(([, group]) => group);
  }

  /**
   * Waits until every name is held (or `waitMs`, counted for the whole set,
   * runs out: `LockTimeoutError` naming the part still busy; or `signal`
   * aborts: its reason). Inside `withLock` of this multi-lock, or of a plain
   * lock on one of its names, the parts already owned re-enter at once.
   */
  acquire(options?: AcquireOptions): Promise<MultiLease> {
    return this.#take(options, 'wait') as Promise<MultiLease>;
  }

  /** Takes every name if all are free (or re-entered), without waiting: `null`, holding nothing, when any is busy. */
  tryAcquire(options?: TryAcquireOptions): Promise<MultiLease | null> {
    return this.#take(options, 'try');
  }

  /**
   * Runs `fn` holding every name and releases them afterwards, whatever `fn`
   * does. Calls made from inside `fn` re-enter: this multi-lock, and
   * `client.lock(name)` for any of its names. If any part is lost while `fn`
   * runs, the promise rejects with that part's `LockLostError` even when `fn`
   * resolved.
   */
  async withLock<T>(fn: (lease: MultiLease) => Promise<T> | T, options?: WithLockOptions): Promise<T> {
    validate.fn('fn', fn);
    const lease = (await this.#take(options, 'wait'))!;
    const holds = partHolds(lease);
    let result: T;
    try {
      result = await this.#engine.runOwning(holds, () => fn(lease));
    } catch (error) {
      await lease[Symbol.asyncDispose]().catch((releaseError: unknown) => this.#engine.onError(releaseError));
      throw error;
    }
    await lease[Symbol.asyncDispose]();
    const lost = holds.find((hold) => hold.lostError);
    if (lost) throw lost.abortReason ?? lost.lostError;
    return result;
  }

  /** True when any of the names is held by anyone now (an acquisition would wait). */
  async isLocked(): Promise<boolean> {
    return (await Promise.all(this.#locks.map((lock) => lock.isLocked()))).some(Boolean);
  }

  /** Milliseconds until the last of the names' current leases ends; 0 when every name is free. */
  async remainingTtlMs(): Promise<number> {
    return Math.max(0, ...(await Promise.all(this.#locks.map((lock) => lock.remainingTtlMs()))));
  }

  /**
   * Frees every name whoever holds it (`Lock.forceRelease()` on each).
   * Resolves true when any lock was removed.
   */
  async forceRelease(): Promise<boolean> {
    return (await Promise.all(this.#locks.map((lock) => lock.forceRelease()))).some(Boolean);
  }

  async #take(options: unknown, mode: 'wait' | 'try'): Promise<MultiLease | null> {
    const opts = resolveAcquireOptions(options);
    const started = performance.now();
    const deadline = opts.waitMs === undefined ? undefined : started + opts.waitMs;
    for (;;) {
      const epoch = this.#engine.connectionEpoch();
      const parts = new TakenParts(this.#engine.driftFactor);
      let outcome: 'taken' | 'none' | 'again';
      try {
        outcome = await this.#takeOnce(parts, opts, mode, started, deadline);
        // Every part with its full lease ahead, or start again: a part taken
        // early may have run low (or out) while a later one was waited for.
        // When the connection dropped meanwhile, a server that restarted
        // without persistence may have forgotten any part: confirm them all.
        if (outcome === 'taken' && !(await parts.refresh(epoch !== this.#engine.connectionEpoch()))) outcome = 'again';
      } catch (error) {
        parts.stop();
        await this.#giveBack(parts.leases);
        throw error;
      }
      parts.stop();
      if (outcome === 'taken') return new MultiLease(new Map(this.names.map((name) => [name, parts.leases.get(name)!])), this.#engine);
      await this.#giveBack(parts.leases);
      if (outcome === 'none' || mode === 'try') return null;
      if (deadline !== undefined && performance.now() >= deadline) {
        throw new LockTimeoutError(this.names[0]!, Math.round(performance.now() - started));
      }
      opts.signal?.throwIfAborted();
    }
  }

  /**
   * One pass over the groups in the global order, into `parts`: 'taken' when
   * every name is, 'none' when a try found one busy, 'again' when a part taken
   * earlier was lost while a later one was waited for.
   */
  async #takeOnce(
    parts: TakenParts,
    opts: ResolvedAcquireOptions,
    mode: 'wait' | 'try',
    started: number,
    deadline: number | undefined,
  ): Promise<'taken' | 'none' | 'again'> {
    // A part's loss ends the wait for the later ones; the caller's own signal still wins.
    const signal = opts.signal ? AbortSignal.any([opts.signal, parts.lostSignal]) : parts.lostSignal;
    try {
      // Parts this chain owns already (inside a withLock) re-enter first: they never wait.
      const owned = this.#locks.filter((lock) => currentOwner(this.#engine.scopeKey(lock.name, 'lock')) !== undefined);
      for (const lock of owned) {
        parts.add([(await acquireLease(this.#engine, lock, { leaseMs: opts.leaseMs }, 'wait', this.names))!]);
      }
      for (const group of this.#groups) {
        const rest = group.filter((lock) => !parts.leases.has(lock.name));
        if (rest.length === 0) continue;
        const remaining = deadline === undefined ? undefined : Math.ceil(deadline - performance.now());
        if (remaining !== undefined && remaining <= 0 && mode === 'wait') {
          throw new LockTimeoutError(rest[0]!.name, Math.round(performance.now() - started));
        }
        const leases =
          rest.length === 1
            ? await acquireLease(this.#engine, rest[0]!, mode === 'try' ? { leaseMs: opts.leaseMs } : { ...opts, waitMs: remaining, signal }, mode, this.names)
                .then((lease) => lease && [lease])
            : await traceAcquireAll(
                rest.map((lock) => () => ({ name: lock.name, kind: telemetryKind(lock), mode, clientId: this.#engine.clientId, signal })),
                () => this.#takeGroup(rest, opts.leaseMs, deadline, signal, mode, started),
                holdOf,
              );
        if (!leases) return 'none';
        parts.add(leases);
        if (parts.lostSignal.aborted) return 'again';
      }
    } catch (error) {
      if (parts.lostSignal.aborted && !opts.signal?.aborted) return 'again';
      throw error;
    }
    return 'taken';
  }

  /** Several names of one hash slot, by one script call per attempt. */
  async #takeGroup(
    locks: readonly Lock[],
    leaseMsOption: number | undefined,
    deadline: number | undefined,
    signal: AbortSignal | undefined,
    mode: 'wait' | 'try',
    started: number,
  ): Promise<Lease[] | null> {
    const engine = this.#engine;
    engine.assertOpen();
    const evictionChecked = engine.serverReady(deadline, signal);
    if (evictionChecked) await evictionChecked.catch(serverCheckFailure(locks[0]!.name, started, deadline));
    const { leaseMs, renewer } = engine.leaseFor(leaseMsOption);
    const autoRenew = renewer !== undefined;
    for (;;) {
      // One owner for the group's parts: 16 characters, as for a plain lock.
      const owner = engine.clientId + randomId(6);
      const request = { names: locks.map((l) => l.name), keys: locks.map((l) => l.keys), owner, leaseMs, deadline, signal, mode, started };
      const granted = await acquireGroup(engine, request);
      if (!granted) return null;
      const holdDeadline = granted.invokedAt + leaseMs - engine.marginMs(leaseMs);
      if (engine.isClosed()) {
        void cancelGroup(engine, request, granted.requestId);
        throw new ClientClosedError();
      }
      if (performance.now() >= holdDeadline) {
        // Read after the leases it granted ran out (a stalled event loop): a
        // rival may hold a part already. Undo, then try again while allowed.
        await cancelGroup(engine, request, granted.requestId);
        if (mode === 'try') return null;
        if (deadline !== undefined && performance.now() >= deadline) {
          throw new LockTimeoutError(locks[0]!.name, Math.round(performance.now() - started));
        }
        signal?.throwIfAborted();
        continue;
      }
      const waitedMs = Math.round(performance.now() - started);
      return locks.map((lock, i) => {
        const part = granted.parts[i]!;
        const hold = new Hold({
          name: lock.name, keys: lock.keys, owner, token: part.token, count: part.holdCount,
          leaseMs, deadline: holdDeadline, autoRenew, group: this.names, kind: MUTEX,
        });
        engine.holds.add(hold);
        engine.emitLazily('acquired', () =>
          hold.eventPayload({ name: hold.name, token: hold.token, holdCount: hold.count, waitedMs, reentrant: false }),
        );
        return new Lease(engineLeaseOps(engine), hold, hold.count);
      });
    }
  }

  /** Releases what an acquisition took before a later part failed; failures go to the `error` event. */
  async #giveBack(taken: ReadonlyMap<string, Lease>): Promise<void> {
    const results = await Promise.allSettled([...taken.values()].map((lease) => lease[Symbol.asyncDispose]()));
    for (const result of results) if (result.status === 'rejected') this.#engine.onError(result.reason);
  }
}

/** `client.multiLock(names)`: a multi-lock over several names (no I/O). */
export function newMultiLock(engine: Engine, names: readonly string[]): MultiLock {
  engine.assertOpen();
  return new MultiLock(engine, validate.lockNames(names).map((name) => newLock(engine, name)));
}
