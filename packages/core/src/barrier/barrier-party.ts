import { performance } from 'node:perf_hooks';
import { ClientClosedError, KeyConflictError, LockTimeoutError, isHoldfastError } from '../errors/errors.js';
import { type BarrierEngine, arriveCall, leaveCall, waitCall, type BarrierRef, type PartyLease, type PartyStatus } from './barrier-calls.js';
import { randomId } from '../engine/owner.js';
import type { Waiter } from '../engine/waiter.js';
import { isServerReply } from '../port/index.js';
import { BarrierBrokenError, PartyCountMismatchError, type BarrierBrokenReason } from './barrier-errors.js';
import type { ResolvedArriveOptions } from './barrier-options.js';

/** What `barrier.arrive()` resolves with. */
export interface Arrival {
  /** The generation that tripped: the same for every party it let through, one more than the last trip's. */
  readonly generation: number;
}

/**
 * A reason to stop waiting, and what this party then rejects with (unless a
 * trip came first); for a timeout, what made it fail, if anything (the
 * LockTimeoutError is made when it rejects, with the time it really waited).
 */
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
 *
 * An arrival counts toward a trip only while its lease is live, so it must
 * not outlive what the party knows of it: no lease it asks for runs past its
 * `waitMs`, and a party whose leave cannot reach Redis rejects only once
 * every lease it asked for has ended (except when aborted or closed, which
 * reject at once: their arrival counts until its lease ends, as a crashed
 * party's does).
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
  const { commandTimeoutMs } = engine.options;
  let closed = false;
  let waiter: Waiter | undefined;
  let generation: number | undefined;
  const unregister = engine.onClose(() => {
    closed = true;
    waiter?.fail(new ClientClosedError());
  });
  /** This party's LockTimeoutError, with the time it really waited. */
  const timedOut = (cause: unknown): LockTimeoutError =>
    new LockTimeoutError(ref.name, Math.round(performance.now() - started), isHoldfastError(cause) ? { cause } : undefined);
  const settle = (status: PartyStatus): Arrival => {
    if (status.state === 'tripped') {
      engine.emitLazily('tripped', () => ({ name: ref.name, kind: 'barrier' as const, generation: status.generation, waitedMs: Math.round(performance.now() - started) }));
      return { generation: status.generation };
    }
    const broken = status.state === 'broken' ? status : { generation: generation ?? 0, reason: 'lost' as const, by: partyId };
    const error = new BarrierBrokenError(ref.name, broken.generation, broken.reason);
    engine.emitLazily('broken', () => ({ name: ref.name, kind: 'barrier' as const, generation: broken.generation, reason: broken.reason, byThisParty: broken.by === partyId, error }));
    // Its own lease ended with its wait (found by another call just before its own deadline): it timed out.
    if (broken.by === partyId && broken.reason === 'timeout') throw timedOut(undefined);
    throw error;
  };
  /**
   * The lease one call asks for: `leaseMs`, but never past the party's wait,
   * so that a party that times out stops counting then, whether or not its
   * leave reaches Redis.
   */
  const leaseAt = (sentAt: number): PartyLease => {
    const left = deadline === undefined ? Infinity : Math.max(1, Math.ceil(deadline - sentAt));
    return left <= leaseMs ? { ms: left, endsWithWait: true } : { ms: leaseMs, endsWithWait: false };
  };
  /**
   * When every lease this party asked for has surely ended: a call's lease
   * starts, by Redis's clock, before its reply or failure comes back (a call
   * Redis runs after the client gave up on it, a frozen server, is the one
   * case it misses), plus its length and the clock drift margin.
   */
  let countsUntil = 0;
  /** False while no arrival of this party can count: before it is sent, or when Redis refused it. */
  let mayCount = false;
  const asked = (lease: PartyLease): void => {
    countsUntil = Math.max(countsUntil, performance.now() + lease.ms + engine.marginMs(lease.ms));
  };
  /** Sleeps until `until` (woken early by messages, it sleeps again); ends at close(). */
  const outlast = async (until: number): Promise<void> => {
    while (waiter && !closed && performance.now() < until) {
      try {
        await waiter.sleep(until, undefined);
      } catch {
        return;
      }
    }
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
    // Until its lease has ended, its arrival counts: the party is not out before it is, and keeps
    // trying to leave until then (aborted or closed, it tries once and rejects at once).
    const outAt = mayCount && stop.reason !== 'aborted' && stop.reason !== 'closed' ? countsUntil : 0;
    try {
      status = await leaveCall(engine, ref, partyId, stop.reason, { deadline: Math.max(performance.now() + commandTimeoutMs, outAt) });
    } catch (error) {
      // Unreachable or refused: the party's lease ends by itself, and the others find it ended.
      engine.onError(error);
      await outlast(outAt);
    }
    // Its generation tripped with it counted: it goes through (an arrival whose reply was lost too).
    if (status?.state === 'tripped' && stop.reason !== 'closed') {
      if (stop.reason === 'lost' && !(stop.error instanceof BarrierBrokenError)) engine.onError(stop.error);
      return settle(status);
    }
    // A closed client's party always gets ClientClosedError (another of its parties may have broken it first).
    if (status?.state === 'broken' && stop.reason !== 'closed' && (status.by !== partyId || status.reason === 'lost')) return settle(status);
    if (status?.state === 'broken') {
      const { generation: broken, reason } = status;
      const error = new BarrierBrokenError(ref.name, broken, reason);
      engine.emitLazily('broken', () => ({ name: ref.name, kind: 'barrier' as const, generation: broken, reason, byThisParty: true, error }));
    }
    throw stop.reason === 'timeout' ? timedOut(stop.error) : stop.error;
  };
  const stopFor = (error: unknown): GiveUp => {
    if (closed || engine.isClosed()) return new GiveUp('closed', new ClientClosedError());
    if (signal?.aborted) return new GiveUp('aborted', signal.reason);
    const now = performance.now();
    if (deadline !== undefined && now >= deadline) return new GiveUp('timeout', error);
    return new GiveUp('lost', error);
  };

  try {
    try {
      // A subscription not done by the wait's end is not waited for (a hung server).
      waiter = await engine.waiters.join(ref.keys.channel, partyId, deadline ?? Infinity, false, signal);
    } catch (error) {
      throw closed || engine.isClosed() ? new ClientClosedError() : error;
    }
    if (closed) throw new ClientClosedError();
    // Over before it arrived: nothing of this party was sent, so nothing can count.
    signal?.throwIfAborted();
    if (deadline !== undefined && performance.now() >= deadline) throw timedOut(undefined);
    let invokedAt = performance.now();
    const lease = leaseAt(invokedAt);
    let status: PartyStatus;
    try {
      status = await arriveCall(engine, ref, partyId, lease, parties, { deadline, signal });
    } catch (error) {
      // Refused before anything was written: nothing to undo.
      if (error instanceof PartyCountMismatchError || error instanceof KeyConflictError) throw error;
      // The arrival may have been made, unless Redis answered with an error: a refused command
      // stops the script before the arrival counts, or once its generation's parties were
      // dropped (a refused DEL aside, with which no generation can end). Leaving breaks it.
      asked(lease);
      mayCount = !isServerReply(error);
      return await giveUp(stopFor(error));
    }
    asked(lease);
    mayCount = true;
    let receivedAt = performance.now();
    // When this party must find its lease lost (one that ends with its wait: its timeout).
    const lostAt = (from: number, given: PartyLease) => (given.endsWithWait ? Infinity : from + given.ms - engine.marginMs(given.ms));
    let leaseEnds = lostAt(invokedAt, lease);
    let retryAt = Infinity;
    for (;;) {
      if (status.state !== 'waiting') return settle(status);
      generation = status.generation;
      if (closed) return await giveUp(stopFor(undefined));
      // After a failed call, only the retry (or the wait's end) wakes it: the other times are stale.
      const watchAt = status.otherMs < 0 ? Infinity : receivedAt + status.otherMs + 2;
      const planned = retryAt === Infinity ? Math.min(invokedAt + leaseMs / 3, watchAt) : retryAt;
      // Without a subscription no message comes: look again after a backoff step.
      const sleepFrom = performance.now();
      const wakeAt = sleepFrom + waiter.lookAgainIn(Math.max(0, Math.min(planned, deadline ?? Infinity) - sleepFrom));
      try {
        await waiter.sleep(wakeAt, signal);
      } catch (error) {
        return await giveUp(stopFor(error));
      }
      if (closed || (deadline !== undefined && performance.now() >= deadline)) return await giveUp(stopFor(undefined));
      const sentAt = performance.now();
      const renewal = leaseAt(sentAt);
      try {
        // Bounded by the party's own lease, but never shorter than one command timeout
        // (a process that was frozen past its lease still learns how its arrival ended).
        const until = Math.max(leaseEnds, sentAt + commandTimeoutMs);
        try {
          status = await waitCall(engine, ref, partyId, renewal, { deadline: deadline === undefined ? until : Math.min(until, deadline), signal });
        } finally {
          asked(renewal);
        }
        invokedAt = sentAt;
        receivedAt = performance.now();
        leaseEnds = lostAt(invokedAt, renewal);
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
