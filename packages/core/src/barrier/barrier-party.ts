import { performance } from 'node:perf_hooks';
import { ClientClosedError, KeyConflictError, LockTimeoutError, isHoldfastError } from '../errors/errors.js';
import type { BarrierEngine } from './barrier-engine.js';
import { randomId } from '../engine/owner.js';
import type { Waiter } from '../engine/waiter.js';
import { arriveCall, leaveCall, waitCall, type BarrierRef, type PartyStatus } from './barrier-calls.js';
import { BarrierBrokenError, PartyCountMismatchError, type BarrierBrokenReason } from '../errors/barrier-errors.js';
import type { ResolvedArriveOptions } from './barrier-options.js';

/** What `barrier.arrive()` resolves with. */
export interface Arrival {
  /** The generation that tripped: the same for every party it let through, one more than the last trip's. */
  readonly generation: number;
}

/** A reason to stop waiting, and what this party then rejects with (unless a trip came first). */
class GiveUp {
  constructor(
    readonly reason: BarrierBrokenReason,
    readonly error: unknown,
  ) {}
}

/**
 * One party's arrival and wait. Subscribed before it arrives (a trip right
 * after is heard); while it waits, it sleeps until a message (a trip, a
 * break, a shorter lease arriving), the next renewal of its own lease (every
 * third of it), the earliest lease end of another party (to find it lost),
 * or its own `waitMs`. Each wake-up is one call, which renews its lease,
 * purges parties whose lease ended (breaking the generation) and says where
 * the arrival stands.
 */
export async function arriveAndWait(
  engine: BarrierEngine,
  ref: BarrierRef,
  parties: number,
  opts: ResolvedArriveOptions,
  leaseMs: number,
  started: number,
): Promise<Arrival> {
  const partyId = engine.clientId + randomId(6);
  const deadline = opts.waitMs === undefined ? undefined : started + opts.waitMs;
  const { signal } = opts;
  const { commandTimeoutMs, handoffTimeoutMs } = engine.options;
  let closed = false;
  let waiter: Waiter | undefined;
  let generation: number | undefined;
  const unregister = engine.onClose(() => {
    closed = true;
    waiter?.fail(new ClientClosedError());
  });
  const settle = (status: PartyStatus): Arrival => {
    if (status.state === 'tripped') {
      engine.emitLazily('tripped', () => ({ name: ref.name, kind: 'barrier' as const, generation: status.generation, waitedMs: Math.round(performance.now() - started) }));
      return { generation: status.generation };
    }
    const broken = status.state === 'broken' ? status : { generation: generation ?? 0, reason: 'lost' as const, by: partyId };
    const error = new BarrierBrokenError(ref.name, broken.generation, broken.reason);
    engine.emitLazily('broken', () => ({ name: ref.name, kind: 'barrier' as const, generation: broken.generation, reason: broken.reason, byThisParty: broken.by === partyId, error }));
    throw error;
  };
  /**
   * Stops waiting: the generation, if it still waits, is broken for the
   * others at once. A trip that came first still lets a party through that
   * timed out or was aborted (as Java's CyclicBarrier); a break by another
   * party first is reported as that break, except to a party whose client
   * closed (ClientClosedError, always).
   */
  const giveUp = async (stop: GiveUp): Promise<Arrival> => {
    let status: PartyStatus | undefined;
    try {
      status = await leaveCall(engine, ref, partyId, stop.reason, { deadline: performance.now() + commandTimeoutMs });
    } catch (error) {
      // Unreachable: the party's lease ends by itself, and the others find it lost.
      engine.onError(error);
    }
    if (status?.state === 'tripped' && (stop.reason === 'timeout' || stop.reason === 'aborted')) return settle(status);
    // A closed client's party always gets ClientClosedError (another of its parties may have broken it first).
    if (status?.state === 'broken' && stop.reason !== 'closed' && (status.by !== partyId || status.reason === 'lost')) return settle(status);
    if (status?.state === 'broken') {
      const error = new BarrierBrokenError(ref.name, status.generation, stop.reason);
      engine.emitLazily('broken', () => ({ name: ref.name, kind: 'barrier' as const, generation: status.generation, reason: stop.reason, byThisParty: true, error }));
    }
    throw stop.error;
  };
  const stopFor = (error: unknown): GiveUp => {
    if (closed || engine.isClosed()) return new GiveUp('closed', new ClientClosedError());
    if (signal?.aborted) return new GiveUp('aborted', signal.reason);
    const now = performance.now();
    if (deadline !== undefined && now >= deadline) {
      const timeout = new LockTimeoutError(ref.name, Math.round(now - started), isHoldfastError(error) ? { cause: error } : undefined);
      return new GiveUp('timeout', timeout);
    }
    return new GiveUp('lost', error);
  };

  try {
    try {
      waiter = await engine.waiters.join(ref.keys.channel, partyId, Infinity);
    } catch (error) {
      throw closed || engine.isClosed() ? new ClientClosedError() : error;
    }
    if (closed) throw new ClientClosedError();
    let invokedAt = performance.now();
    let status: PartyStatus;
    try {
      status = await arriveCall(engine, ref, partyId, leaseMs, parties, { deadline, signal });
    } catch (error) {
      // Refused before anything was written: nothing to undo.
      if (error instanceof PartyCountMismatchError || error instanceof KeyConflictError) throw error;
      // The arrival may have been made: leaving breaks its generation for the others.
      return await giveUp(stopFor(error));
    }
    let receivedAt = performance.now();
    let leaseEnds = invokedAt + leaseMs - engine.marginMs(leaseMs);
    let retryAt = Infinity;
    for (;;) {
      if (status.state !== 'waiting') return settle(status);
      generation = status.generation;
      if (closed) return await giveUp(stopFor(undefined));
      // After a failed call, only the retry (or the wait's end) wakes it: the other times are stale.
      const watchAt = status.otherMs < 0 ? Infinity : receivedAt + status.otherMs + 2;
      const planned = retryAt === Infinity ? Math.min(invokedAt + leaseMs / 3, watchAt) : retryAt;
      let wakeAt = Math.min(planned, deadline ?? Infinity);
      // Without a subscription no message comes: look again within a hand-off timeout.
      if (!engine.waiters.isListening(ref.keys.channel)) wakeAt = Math.min(wakeAt, performance.now() + handoffTimeoutMs);
      try {
        await waiter.sleep(wakeAt, signal);
      } catch (error) {
        return await giveUp(stopFor(error));
      }
      if (closed || (deadline !== undefined && performance.now() >= deadline)) return await giveUp(stopFor(undefined));
      const sentAt = performance.now();
      try {
        // Bounded by the party's own lease, but never shorter than one command timeout
        // (a process that was frozen past its lease still learns how its arrival ended).
        const until = Math.max(leaseEnds, sentAt + commandTimeoutMs);
        status = await waitCall(engine, ref, partyId, leaseMs, { deadline: deadline === undefined ? until : Math.min(until, deadline), signal });
        invokedAt = sentAt;
        receivedAt = performance.now();
        leaseEnds = invokedAt + leaseMs - engine.marginMs(leaseMs);
        retryAt = Infinity;
      } catch (error) {
        if (error instanceof KeyConflictError) throw error;
        const now = performance.now();
        if (closed || signal?.aborted || (deadline !== undefined && now >= deadline) || now >= leaseEnds) {
          const stop = stopFor(error);
          return await giveUp(stop.reason === 'lost' ? new GiveUp('lost', new BarrierBrokenError(ref.name, generation, 'lost')) : stop);
        }
        engine.onError(error);
        retryAt = now + Math.max(10, Math.min(1_000, leaseMs / 6));
      }
    }
  } finally {
    unregister();
    waiter?.dispose();
  }
}
