import type { Redis } from 'ioredis';
import { LockClient, type Lease, type Lock } from '@holdfast/core';
import { ReferenceModel, describe as describeOwner, outcomeOf, type OwnerRecord } from './reference-model.js';
import type { End, LockName, Program, Section, Step } from './program.js';

/**
 * Runs a Program against real Redis and checks every step against the
 * ReferenceModel. Interleavings are chosen by a StepScheduler (fast-check's
 * `fc.scheduler()` in the property tests, `inOrder` in regression tests): every
 * step of every task waits for a scheduled turn, and every lock call's result
 * reaches its task through the scheduler once Redis has answered.
 */

/** The part of fast-check's Scheduler the interpreter uses. */
export interface StepScheduler {
  schedule<T>(task: Promise<T>, label?: string): Promise<T>;
}

/** A scheduler that lets every step and result through as soon as it is ready. */
export const inOrder: StepScheduler = { schedule: (task) => task };

/** Lease of every acquisition that names none, in ms: long enough for any section, short enough that a lock left by close() frees soon. */
export const CLIENT_LEASE_MS = 3_000;
/** Lease of `short` sections. */
export const SHORT_LEASE_MS = 300;
/** How long an `expire` step waits: past the lease by half of it (isHeld compares with the deadline when read, so any wait past it is enough). */
export const EXPIRE_WAIT_MS = 450;
/** waitMs of an acquisition that another chain blocks: generous, so reaching it is a failure. */
export const LONG_WAIT_MS = 20_000;
/** waitMs of an acquisition this chain blocks itself (it must time out). */
export const SELF_WAIT_MS = 100;
/** A program that has not ended after this hangs (a huge bound, never reached by a working build). */
export const HANG_BOUND_MS = 60_000;

export interface RunResult {
  readonly model: ReferenceModel;
  readonly hung: boolean;
}

/** One enclosing section of a chain. */
interface Frame {
  readonly client: number;
  readonly name: LockName;
  readonly owner: OwnerRecord;
  readonly kind: 'with' | 'bare';
  readonly short: boolean;
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

class TestAbort extends Error {
  readonly code = 'TEST_ABORT';
}
class TestThrow extends Error {
  readonly code = 'TEST_THROW';
}

const CLOSED = 'ERR_CLIENT_CLOSED';
const NOT_HELD = 'ERR_LOCK_NOT_HELD';
const LOST = 'ERR_LOCK_LOST';
const TIMEOUT = 'ERR_LOCK_TIMEOUT';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs `program` with fresh LockClients over `redis` (one ioredis client per
 * LockClient, plus one for the observer) under `prefix`, and returns the model
 * with its violations. Never throws for a violation: the caller asserts.
 */
export async function runProgram(
  program: Program,
  redis: { clients: readonly Redis[]; observer: Redis },
  scheduler: StepScheduler,
  prefix: string,
  drive: (all: Promise<unknown>) => Promise<unknown> = (all) => all,
): Promise<RunResult> {
  const model = new ReferenceModel();
  const clients = Array.from(
    { length: program.clients },
    (_, i) => new LockClient(redis.clients[i]!, { prefix, leaseMs: CLIENT_LEASE_MS }),
  );
  const observer = new LockClient(redis.observer, { prefix });
  const run = new Interpreter(model, clients, observer, scheduler);
  clients.forEach((client, i) => run.listen(client, i));

  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), HANG_BOUND_MS);
  });
  const all = Promise.all(program.tasks.map((task, i) => run.task(task, [], `t${i}`)));
  const ended = await Promise.race([drive(all).then(() => 'done' as const), hang]);
  clearTimeout(timer);
  if (ended === 'hung') model.violation(`program did not end within ${HANG_BOUND_MS} ms`);
  else await run.finalChecks();
  await Promise.allSettled(clients.map((c) => c.close({ release: true })));
  await observer.close();
  return { model, hung: ended === 'hung' };
}

class Interpreter {
  readonly #model: ReferenceModel;
  readonly #clients: LockClient[];
  readonly #observer: LockClient;
  readonly #s: StepScheduler;
  /** Lock objects made before anything closes (lock() throws on a closed client). */
  readonly #locks: Map<string, Lock>;
  /** The first lease of each owner, to ask whether it still believes it holds the lock. */
  readonly #leaseOf = new Map<OwnerRecord, Lease>();
  /** When each owner's acquisition was invoked (its key lives at least its lease from then). */
  readonly #invokedAt = new Map<OwnerRecord, { at: number; leaseMs: number }>();
  #chains = 0;
  /** Stalls started so far: a call that saw none cannot blame one for an expired lease. */
  #stalls = 0;

  constructor(model: ReferenceModel, clients: LockClient[], observer: LockClient, scheduler: StepScheduler) {
    this.#model = model;
    this.#clients = clients;
    this.#observer = observer;
    this.#s = scheduler;
    this.#locks = new Map();
    clients.forEach((client, i) => {
      for (const name of ['a', 'b', 'c'] as const) this.#locks.set(`${i}:${name}`, client.lock(name));
    });
  }

  listen(client: LockClient, i: number): void {
    const model = this.#model;
    client.on('acquired', (e) => model.onAcquired(i, e.name, e.token, e.holdCount, e.reentrant));
    client.on('released', (e) => model.onReleased(i, e.name, e.token, e.holdCount));
    client.on('lost', (e) => model.onLost(i, e.name, e.token, e.reason));
    client.on('error', (error) => model.note(`error event on c${i}: ${String((error as Error)?.message ?? error)}`));
  }

  async task(steps: readonly Step[], frames: readonly Frame[], label: string): Promise<void> {
    try {
      for (const [k, step] of steps.entries()) {
        await this.#point(`${label}.${k}`);
        await this.#step(step, frames, `${label}.${k}`);
      }
    } catch (error) {
      this.#model.violation(`${label}: unexpected ${String((error as Error)?.stack ?? error)}`);
    }
  }

  async finalChecks(): Promise<void> {
    const model = this.#model;
    for (const owner of model.owners) {
      if (owner.state === 'held') model.violation(`${describeOwner(owner)} still held after every section ended`);
    }
    for (const name of ['a', 'b', 'c'] as const) {
      if (!model.certainlyFree(name)) continue;
      const token = await this.#observer.lock(name).currentToken();
      if (token !== null) model.violation(`${name} still locked (token ${token}) after every owner released it`);
    }
  }

  // ---- scheduling ----

  /** A turn: the scheduler decides which ready task goes on. */
  #point(label: string): Promise<void> {
    return this.#s.schedule(Promise.resolve(), label);
  }

  /** Waits for `call` to settle, runs `onSettle` at once, then hands the result over when the scheduler says. */
  async #settle<T>(call: Promise<T>, label: string, onSettle?: (s: Settled<T>) => void): Promise<Settled<T>> {
    const settled: Settled<T> = await call.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    onSettle?.(settled);
    return this.#s.schedule(Promise.resolve(settled), label);
  }

  // ---- steps ----

  async #step(step: Step, frames: readonly Frame[], label: string): Promise<void> {
    switch (step.op) {
      case 'spawn':
        await Promise.all(step.tasks.map((t, i) => this.task(t, frames, `${label}/${i}`)));
        return;
      case 'close':
        return this.#close(step.client, step.release, label);
      case 'stall': {
        this.#stalls++;
        this.#model.count('event loop stalled');
        const until = performance.now() + step.ms;
        while (performance.now() < until) {
          // Busy on purpose: nothing else may run.
        }
        return;
      }
      case 'section':
        return this.#section(step, frames, label);
    }
  }

  async #close(i: number, release: boolean, label: string): Promise<void> {
    const model = this.#model;
    if (i >= this.#clients.length) return;
    const wasClosed = model.isClosed(i);
    const held = model.owners.filter((o) => o.client === i && o.state === 'held');
    model.closeInvoked(i);
    const settled = await this.#settle(this.#clients[i]!.close(release ? { release: true } : undefined), `${label} close`);
    model.expectOutcome(`${label} close(c${i})`, outcomeOf(settled), new Set(['value']), `close${release ? '({ release: true })' : '()'} with ${held.length} held`);
    model.closeSettled(i);
    if (wasClosed) return;
    for (const owner of held) {
      const lease = this.#leaseOf.get(owner);
      if (!lease) continue;
      if (lease.isHeld) model.violation(`${describeOwner(owner)}: isHeld after close()`);
      if (owner.state === 'closed') {
        const reason = lease.signal.reason as { code?: string } | undefined;
        if (!lease.signal.aborted || reason?.code !== CLOSED) {
          model.violation(`${describeOwner(owner)}: signal not aborted with ClientClosedError after close() (reason ${String(reason?.code)})`);
        }
      }
      // The key stays until its TTL without { release: true }, and is gone with it.
      const token = await this.#observer.lock(owner.name).currentToken();
      const since = this.#invokedAt.get(owner);
      if (release) {
        if (token === owner.token) model.violation(`${describeOwner(owner)} still in Redis after close({ release: true })`);
      } else if (since && owner.state === 'closed' && performance.now() - since.at < since.leaseMs - 100) {
        if (token === null || token < owner.token) {
          model.violation(`${describeOwner(owner)} gone from Redis right after close() without release (token ${token})`);
        }
      }
    }
  }

  async #section(step: Section, frames: readonly Frame[], label: string): Promise<void> {
    const model = this.#model;
    const lock = this.#locks.get(`${step.client % this.#clients.length}:${step.lock}`)!;
    const client = step.client % this.#clients.length;
    const chain = `${label}#${++this.#chains}`;
    const reentryFrame = [...frames].reverse().find((f) => f.kind === 'with' && f.client === client && f.name === step.lock);
    const blockers = frames.filter((f) => f.name === step.lock);
    const leaseMs = step.short ? SHORT_LEASE_MS : undefined;

    /**
     * Outcomes the acquisition may have, from the model's state now: at the
     * invocation (`beforeCall`: a client closed by then refuses the call), and
     * again when Redis has answered, before anything else is learnt.
     */
    const allowedNow = (beforeCall: boolean): Set<string> => {
      const allowed = new Set<string>();
      if (model.isClosing(client)) allowed.add(CLOSED);
      if (beforeCall && model.isClosed(client)) return allowed;
      if (step.abort) allowed.add('TEST_ABORT');
      const reentry = reentryFrame?.owner.state === 'held';
      if (reentry) {
        allowed.add('lease');
        // A frame's hold lost while the re-entry ran (a short lease): the call fails with the loss.
        if (reentryFrame!.short) [LOST, NOT_HELD].forEach((c) => allowed.add(c));
        return allowed;
      }
      const selfBlocked = blockers.filter((f) => f.owner.state === 'held' || f.owner.state === 'closed');
      if (selfBlocked.length > 0) {
        // This chain holds the lock through an enclosing section that is not a
        // withLock frame of this client: a new owner, which waits for itself.
        allowed.add(step.via === 'try' ? 'null' : TIMEOUT);
        if (selfBlocked.some((f) => f.short || f.owner.state !== 'held')) allowed.add('lease');
        return allowed;
      }
      allowed.add('lease');
      if (step.via === 'try' && model.mayBeBusy(step.lock, chain)) allowed.add('null');
      // Someone else took the lock while this call ran: it may have found it busy.
      if (step.via === 'try' && model.grants(step.lock) > grantsAtInvoke + (ownGrant ? 1 : 0)) allowed.add('null');
      // The event loop stalled while the reply waited: a grant read after its
      // lease ran out is given back, never handed out, and tryAcquire() says null.
      if (step.via === 'try' && this.#stalls !== stallsAtInvoke) allowed.add('null');
      return allowed;
    };
    const grantsAtInvoke = model.grants(step.lock);
    const stallsAtInvoke = this.#stalls;
    let ownGrant = false;

    const expectReentry = reentryFrame?.owner.state === 'held';
    const allowedAtInvoke = allowedNow(true);
    const closedAtInvoke = model.isClosed(client);
    let allowedAtSettle: Set<string> | undefined;
    const selfBlockedAtInvoke = !expectReentry && blockers.some((f) => f.owner.state === 'held' || f.owner.state === 'closed');
    const waitMs = selfBlockedAtInvoke ? SELF_WAIT_MS : LONG_WAIT_MS;
    const kindAtInvoke = model.isClosed(client)
      ? 'closed client'
      : expectReentry
        ? 'in its withLock frame'
        : selfBlockedAtInvoke
          ? 'held by its own chain'
          : 'new owner';
    const tag = `${step.via}${step.abort ? '+abort' : ''}${step.short ? ' (short)' : ''} ${kindAtInvoke}`;
    const controller = step.abort ? new AbortController() : undefined;
    const snapshot = model.invokeAcquire(step.lock, chain);
    const invokedAt = performance.now();
    let acquireDone = false;
    const onAcquireSettled = (lease: Lease | null | undefined, error?: unknown) => {
      if (acquireDone) return;
      acquireDone = true;
      if (lease?.holdCount === 1) ownGrant = true;
      allowedAtSettle = allowedNow(false);
      model.acquireSettled(step.lock, chain);
      if ((error as { code?: string })?.code === TIMEOUT || controller?.signal.aborted) model.markUncertain(step.lock);
      if (!lease) return;
      const owner = model.ownerOf(client, step.lock, lease.token);
      if (!owner) {
        model.violation(`${label}: lease ${step.lock}#${lease.token} on c${client} without an 'acquired' event`);
        return;
      }
      // An acquisition never hands out a lease already past its deadline
      // (unless the event loop stalled between the grant and this line).
      if (!lease.isHeld && owner.state !== 'closed' && stallsAtInvoke === this.#stalls && !model.isClosing(client)) {
        model.violation(`${label}: ${step.via} returned ${describeOwner(owner)} already not held`);
      }
      if (lease.holdCount === 1 && !this.#leaseOf.has(owner)) {
        this.#leaseOf.set(owner, lease);
        this.#invokedAt.set(owner, { at: invokedAt, leaseMs: leaseMs ?? CLIENT_LEASE_MS });
        model.checkNewToken(owner, snapshot);
      }
    };

    // The abort comes at a moment the scheduler picks, while the call runs.
    const aborter = controller
      ? this.#point(`${label} abort`).then(() => controller.abort(new TestAbort('aborted by the program')))
      : Promise.resolve();

    const check = (settled: Settled<unknown>) => {
      // A call made on a closed client may only be refused.
      const allowed = closedAtInvoke ? allowedAtInvoke : new Set([...allowedAtInvoke, ...(allowedAtSettle ?? allowedNow(false))]);
      const outcome = outcomeOf(settled);
      model.expectOutcome(`${label} ${step.via}(c${client}, ${step.lock})`, outcome, allowed, tag);
      if (!settled.ok && outcome.kind === 'error' && outcome.code === 'TEST_ABORT' && settled.error !== controller?.signal.reason) {
        model.violation(`${label}: rejected with an abort error that is not signal.reason`);
      }
    };

    if (step.via === 'withLock') {
      let ran = false;
      let endedOk = true;
      let releasing: OwnerRecord | undefined;
      const call = lock.withLock(
        async (lease) => {
          ran = true;
          onAcquireSettled(lease);
          check({ ok: true, value: lease });
          await this.#point(`${label} enter`);
          endedOk = await this.#body(step, lease, frames, label, 'with', expectReentry ? reentryFrame : undefined);
          // withLock releases the lease from here on.
          const owner = model.ownerOf(client, step.lock, lease.token);
          if (owner && owner.count <= 1) {
            releasing = owner;
            owner.releasing++;
          }
          if (step.end === 'throw') throw new TestThrow('thrown by the section');
          return 'done';
        },
        { waitMs, leaseMs, signal: controller?.signal },
      );
      const settled = await this.#settle(call, `${label} withLock settled`, (s) => {
        if (!ran) onAcquireSettled(undefined, s.ok ? undefined : s.error);
        if (releasing) releasing.releasing--;
      });
      await aborter;
      if (!ran) {
        check(settled);
        return;
      }
      const allowed = new Set<string>();
      if (model.isClosing(client)) allowed.add(CLOSED);
      if (step.end === 'throw') allowed.add('TEST_THROW');
      else if (step.end === 'expire' && !expectReentry && step.short) allowed.add(LOST);
      else allowed.add('value');
      // A lease that ran out under load, or a short one: the section was not exclusive to the end.
      if (!endedOk || step.short || (reentryFrame?.short ?? false)) allowed.add(LOST);
      model.expectOutcome(`${label} withLock(c${client}, ${step.lock}) result`, outcomeOf(settled), allowed, `withLock ending ${step.end}`);
      return;
    }

    const call = step.via === 'try' ? lock.tryAcquire({ leaseMs }) : lock.acquire({ waitMs, leaseMs, signal: controller?.signal });
    const settled = await this.#settle<Lease | null>(call, `${label} ${step.via} settled`, (s) =>
      onAcquireSettled(s.ok ? s.value : undefined, s.ok ? undefined : s.error),
    );
    await aborter;
    check(settled);
    if (!settled.ok || settled.value === null) return;
    await this.#body(step, settled.value, frames, label, 'bare', expectReentry ? reentryFrame : undefined);
  }

  /**
   * Runs a section that got `lease`: enters the occupancy map, runs the
   * body, ends as the program says. Returns false when the lease was found
   * lost along the way.
   */
  async #body(
    step: Section,
    lease: Lease,
    frames: readonly Frame[],
    label: string,
    kind: 'with' | 'bare',
    reentryFrame: Frame | undefined,
  ): Promise<boolean> {
    const model = this.#model;
    const client = step.client % this.#clients.length;
    const owner = model.ownerOf(client, step.lock, lease.token);
    if (!owner) return false;
    if (reentryFrame && owner !== reentryFrame.owner && reentryFrame.owner.state === 'held') {
      model.violation(`${label}: inside a withLock frame of ${describeOwner(reentryFrame.owner)}, got a new owner ${describeOwner(owner)}`);
    }
    if (!reentryFrame && frames.some((f) => f.owner === owner)) {
      model.violation(`${label}: ${step.via} outside a withLock frame re-entered ${describeOwner(owner)}`);
    }
    if (owner === reentryFrame?.owner) {
      if (lease.token !== reentryFrame.owner.token || lease.holdCount < 2) {
        model.violation(`${label}: re-entry lease token ${lease.token} holdCount ${lease.holdCount} in ${describeOwner(owner)}`);
      }
    } else if (lease.holdCount !== 1) {
      model.violation(`${label}: new owner ${describeOwner(owner)} with lease.holdCount ${lease.holdCount}`);
    }

    const inside = owner.state === 'held' && lease.isHeld;
    if (inside) model.enter(owner, (other) => this.#leaseOf.get(other)?.isHeld ?? false);
    const short = step.short || (reentryFrame?.short ?? false);
    const frame: Frame = { client, name: step.lock, owner, kind, short: owner === reentryFrame?.owner ? reentryFrame.short : step.short };
    for (const [k, inner] of step.body.entries()) {
      await this.#point(`${label}>${k}`);
      await this.#step(inner, [...frames, frame], `${label}>${k}`);
    }
    const end: End = step.end === 'expire' && !(step.short && owner !== reentryFrame?.owner) ? 'release' : step.end;
    if (end === 'expire') {
      await sleep(EXPIRE_WAIT_MS);
      await this.#point(`${label} expired`);
      if (lease.isHeld) model.violation(`${label}: ${describeOwner(owner)} isHeld ${EXPIRE_WAIT_MS} ms into a ${SHORT_LEASE_MS} ms lease`);
      const reason = lease.signal.reason as { code?: string } | undefined;
      if (!lease.signal.aborted || (reason?.code !== LOST && reason?.code !== CLOSED)) {
        model.violation(`${label}: signal of expired ${describeOwner(owner)} not aborted with LockLostError (${String(reason?.code)})`);
      }
    }
    if (inside) model.leave(owner);
    if (kind === 'with') {
      // withLock releases its own lease; the callback may release it first.
      if (end === 'extend') await this.#extend(lease, owner, `${label} extend`, short, false);
      if (end === 'releaseTwice' || end === 'releaseExtend') {
        await this.#release(lease, owner, `${label} release`, short, false);
        if (end === 'releaseTwice') await this.#release(lease, owner, `${label} release again`, short, true);
        else await this.#extend(lease, owner, `${label} extend released`, short, true);
      }
      if (end === 'expire') await this.#extend(lease, owner, `${label} extend expired`, short, false);
      return owner.state === 'held';
    }
    if (end === 'extend' || end === 'expire') await this.#extend(lease, owner, `${label} extend`, short, false);
    await this.#release(lease, owner, `${label} release`, short, false);
    if (end === 'releaseTwice') await this.#release(lease, owner, `${label} release again`, short, true);
    if (end === 'releaseExtend') await this.#extend(lease, owner, `${label} extend released`, short, true);
    return owner.state === 'held';
  }

  async #release(lease: Lease, owner: OwnerRecord, label: string, short: boolean, released: boolean): Promise<void> {
    const model = this.#model;
    const allowedNow = (beforeCall: boolean): Set<string> => {
      const allowed = new Set<string>();
      if (model.isClosing(owner.client)) allowed.add(CLOSED);
      if (beforeCall && model.isClosed(owner.client)) return allowed;
      if (released || owner.state !== 'held') allowed.add(NOT_HELD);
      else allowed.add('value');
      if (short) allowed.add(NOT_HELD);
      return allowed;
    };
    const atInvoke = allowedNow(true);
    const closedAtInvoke = model.isClosed(owner.client);
    model.invokeRelease(owner.name);
    // Only a final release takes the hold out of the client's books before it lands.
    const final = owner.count <= 1 ? 1 : 0;
    owner.releasing += final;
    const settled = await this.#settle(lease.release(), label, () => {
      owner.releasing -= final;
      model.releaseSettled(owner.name);
    });
    model.expectOutcome(
      `${label} of ${describeOwner(owner)}`,
      outcomeOf(settled),
      closedAtInvoke ? atInvoke : new Set([...atInvoke, ...allowedNow(false), ...this.#expiredAllowance(owner, NOT_HELD)]),
      released ? 'release of a released lease' : 'release',
    );
  }

  async #extend(lease: Lease, owner: OwnerRecord, label: string, short: boolean, released: boolean): Promise<void> {
    const model = this.#model;
    const allowedNow = (beforeCall: boolean): Set<string> => {
      const allowed = new Set<string>();
      if (model.isClosing(owner.client)) allowed.add(CLOSED);
      if (beforeCall && model.isClosed(owner.client)) return allowed;
      if (owner.state === 'lost') allowed.add(LOST);
      else if (owner.state === 'held') allowed.add('value');
      else allowed.add(NOT_HELD);
      // A released re-entry lease of an owner still holding the lock extends the shared hold.
      if (released && owner.state === 'held') allowed.add(NOT_HELD);
      if (short) allowed.add(LOST);
      return allowed;
    };
    const atInvoke = allowedNow(true);
    const closedAtInvoke = model.isClosed(owner.client);
    const settled = await this.#settle(lease.extend(), label);
    model.expectOutcome(
      `${label} of ${describeOwner(owner)}`,
      outcomeOf(settled),
      closedAtInvoke ? atInvoke : new Set([...atInvoke, ...allowedNow(false), ...this.#expiredAllowance(owner, LOST)]),
      released ? 'extend of a released lease' : 'extend',
    );
  }

  /** A lease that expired under load (reported by a 'lost' event) answers like a lost one. */
  #expiredAllowance(owner: OwnerRecord, code: string): string[] {
    return owner.lostReason === 'expired' ? [code] : [];
  }
}
