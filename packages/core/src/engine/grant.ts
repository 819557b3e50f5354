import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockTimeoutError } from '../errors/errors.js';
import type { LockKeys } from '../keys/keys.js';
import { acquireLoop, send as sendAcquire } from './acquire-loop.js';
import type { Engine } from './engine.js';
import { Hold } from './hold.js';
import { serverCheckFailure } from './server-check.js';
import type { LockKind } from './kind.js';
import { randomId } from './owner.js';

/** What a new hold is taken on: a lock (or a side of one), a semaphore, a part of a multi-lock. */
export interface GrantTarget {
  readonly name: string;
  readonly keys: LockKeys;
  readonly kind: LockKind;
  /** Every name of the multi-lock this hold is a part of (events carry it). */
  readonly group?: readonly string[];
  /** Read-write lock: the owner id of the caller's enclosing write hold (a downgrade). */
  readonly via?: string;
}

/** What the caller asked for: the lease (undefined: the watchdog's, or the client's), the wait, the abort. */
export interface GrantOptions {
  readonly leaseMs: number | undefined;
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/**
 * Takes a new hold of `target` for a new owner, the one path every kind's
 * acquisition runs: the server check, the acquire loop (queue, pub/sub wake-up,
 * hand-off), a hold booked with the engine (deadline, close(), the watchdog),
 * and the hand-off's confirmation. Resolves with what `lease` makes of the
 * booked hold, or `null` when `mode` is 'try' and the lock is busy.
 * `started`: when the caller's wait began (monotonic ms).
 */
export async function grantHold<T>(
  engine: Engine,
  target: GrantTarget,
  options: GrantOptions,
  mode: 'wait' | 'try',
  started: number,
  lease: (hold: Hold) => T,
): Promise<T | null> {
  const deadline = options.waitMs === undefined ? undefined : started + options.waitMs;
  // Reached with nothing awaited since `started` was read, the first attempt counts as sent then.
  let now: number | undefined = started;
  const evictionChecked = engine.serverReady(deadline, options.signal);
  if (evictionChecked) {
    await evictionChecked.catch(serverCheckFailure(target.name, started, deadline));
    now = undefined;
  }
  const { name, keys, kind } = target;
  // A grant read after its lease ran out is undone, and the acquisition runs again.
  for (;;) {
    const { leaseMs, renewer } = engine.leaseFor(options.leaseMs);
    // One owner per acquisition: a resend of a granted request is recognised
    // by it, and cancelling it can only ever undo this acquisition. 16
    // characters (96 random bits): with the request id in the token's field
    // name, a held lock's hash then fits Redis's 48-byte allocation class.
    const owner = engine.clientId + randomId(6);
    const request = { name, keys, owner, leaseMs, deadline, signal: options.signal, mode, kind, via: target.via, started, now };
    now = undefined;
    const granted = await acquireLoop(engine, request);
    if (!granted) return null;
    const hold = new Hold({
      name,
      keys,
      owner,
      token: granted.token,
      count: granted.holdCount,
      leaseMs,
      deadline: granted.claim
        ? granted.invokedAt + granted.claim.claimMs - engine.marginMs(granted.claim.claimMs)
        : granted.invokedAt + leaseMs - engine.marginMs(leaseMs),
      autoRenew: renewer !== undefined,
      group: target.group,
      kind,
      releaseHint: granted.releaseHint,
    });
    if (engine.isClosed()) {
      void engine.cancel(keys, owner, undefined, kind);
      throw new ClientClosedError();
    }
    if (performance.now() < hold.deadline) {
      engine.holds.add(hold, renewer);
      if (granted.claim) confirmHandoff(engine, hold, granted.claim.requestId);
      return lease(hold);
    }
    // The reply was read after the lease it granted had run out (the event
    // loop stalled in between): a rival may hold the lock already. Never hand
    // that lease out: undo what is left of it, then try again while the
    // caller's wait allows.
    await engine.cancel(keys, owner, granted.requestId, kind);
    if (mode === 'try') return null;
    if (deadline !== undefined && performance.now() >= deadline) {
      throw new LockTimeoutError(name, Math.round(performance.now() - started));
    }
    options.signal?.throwIfAborted();
  }
}

/** Resolves after the I/O callbacks of this event-loop turn (and the microtasks they queued). */
const afterThisTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Turns a hand-off claim into the full lease, off the caller's path: the
 * lease was returned on the hand-off message, with a deadline at the end of
 * the claim. Queued on the hold at once, so a re-entry or a release waits
 * for it (a confirmation sent after a re-entry would count as another hold);
 * sent only after this turn of the event loop, so it never delays the start
 * of the caller's section. Until it lands the lease keeps the claim's deadline.
 */
export function confirmHandoff(engine: Engine, hold: Hold, requestId: string): void {
  const request = {
    name: hold.name,
    keys: hold.keys,
    owner: hold.owner,
    leaseMs: hold.leaseMs,
    deadline: undefined,
    signal: undefined,
    mode: 'reenter' as const,
    kind: hold.kind,
  };
  hold
    .serialize(async () => {
      await afterThisTurn();
      if (hold.ended) return;
      const invokedAt = performance.now();
      const reply = await sendAcquire(engine, request, requestId, 'reenter');
      if (reply.granted) {
        const deadline = invokedAt + hold.leaseMs - engine.marginMs(hold.leaseMs);
        if (deadline > hold.deadline) {
          hold.deadline = deadline;
          engine.holds.deadlineMoved(hold);
        }
      } else {
        engine.holds.markLost(hold, 'lost' in reply ? reply.lost : 'taken');
      }
    })
    .catch((error: unknown) => engine.onError(error));
}
