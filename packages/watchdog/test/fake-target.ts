import { LockLostError, type LostReason, type RenewalHold, type RenewalResult, type RenewalTarget, type Renewer } from '@holdfast/core';
import { afterEach, beforeEach, expect, vi } from 'vitest';

/** A hold as the fake target keeps it: its fields change as the target decides. */
export class FakeHold implements RenewalHold {
  active = true;
  deadline: number;

  constructor(
    readonly name: string,
    readonly leaseMs: number,
    readonly token = 1,
  ) {
    this.deadline = performance.now() + leaseMs;
  }
}

type Responder = (holds: readonly RenewalHold[]) => Promise<RenewalResult[]>;

/**
 * A RenewalTarget without Redis for tests under fake timers. It behaves the
 * way LockClient does towards its renewer (unwatch, then lost, on loss) and
 * writes down every call, so tests can assert ordering.
 */
export class FakeTarget implements RenewalTarget {
  renewer: Renewer | undefined;
  readonly log: string[] = [];
  readonly confirmed: { name: string; startedAt: number }[] = [];
  readonly renewCalls: { at: number; names: string[] }[] = [];
  /** Holds sweepExpired() looks at, as LockClient looks at every hold it has. */
  readonly holds = new Set<FakeHold>();
  respond: Responder = (holds) => Promise.resolve(holds.map(() => ({ status: 'renewed' as const })));

  attachRenewer(renewer: Renewer): void {
    this.log.push('attach');
    this.renewer = renewer;
  }

  detachRenewer(renewer: Renewer): void {
    this.log.push('detach');
    if (this.renewer === renewer) this.renewer = undefined;
  }

  /** What LockClient does when an acquisition without leaseMs is granted. */
  grant(name: string): FakeHold {
    const hold = new FakeHold(name, this.renewer?.timeoutMs ?? 1_000);
    this.holds.add(hold);
    this.renewer?.watch(hold);
    return hold;
  }

  /** What LockClient does when the final release starts. */
  release(hold: FakeHold): void {
    hold.active = false;
    this.renewer?.unwatch(hold);
  }

  renewHolds(holds: readonly RenewalHold[]): Promise<RenewalResult[]> {
    const names = holds.map((hold) => hold.name);
    this.log.push(`renew:${names.join(',')}`);
    this.renewCalls.push({ at: performance.now(), names });
    return this.respond(holds);
  }

  confirmRenewal(hold: RenewalHold, startedAt: number): void {
    this.log.push(`confirm:${hold.name}`);
    this.confirmed.push({ name: hold.name, startedAt });
    const h = hold as FakeHold;
    h.deadline = Math.max(h.deadline, startedAt + h.leaseMs);
  }

  markLost(hold: RenewalHold, reason: LostReason): void {
    const h = hold as FakeHold;
    if (!h.active) return;
    this.log.push(`markLost:${h.name}:${reason}`);
    h.active = false;
    const renewer = this.renewer;
    renewer?.unwatch(h);
    renewer?.lost(h, new LockLostError(h.name, h.token, reason));
  }

  sweepExpired(): void {
    this.log.push('sweep');
    for (const hold of this.holds) {
      if (hold.active && hold.deadline <= performance.now()) this.markLost(hold, 'unreachable');
    }
  }
}

/** A promise with its settle functions, for replies the test releases itself. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Fake timers for each test of the calling suite, and an assertion after each
 * that no promise rejection went unhandled meanwhile.
 */
export function useFakeTimersAndCatchUnhandled(): void {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    process.on('unhandledRejection', onUnhandled);
    vi.useFakeTimers();
  });
  afterEach(async () => {
    vi.useRealTimers();
    // Rejections are reported after the microtask queue drains.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled.splice(0)).toEqual([]);
  });
}
