/** One pending timeout of a TimeoutQueue. */
export interface QueuedTimeout {
  /** Monotonic time it is due. */
  readonly at: number;
  /** Dropped by cancel() or once it fired, so that a cancelled entry holds on to nothing. */
  fire: (() => void) | undefined;
}

/**
 * Timeouts that all last `ms`, on one timer. Added in order, they are due in
 * order, so the timer only ever waits for the oldest one still live; one that
 * is cancelled (the usual case: the answers came first) is merely marked.
 * A fan-out per quorum operation, two per Redlock cycle, then costs no timer
 * call of its own while the timer is armed for an earlier one.
 */
export class TimeoutQueue {
  readonly ms: number;
  #queue: QueuedTimeout[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(ms: number) {
    this.ms = ms;
  }

  /** Calls `fire` in `ms`, unless cancelled first. */
  add(fire: () => void): QueuedTimeout {
    const entry: QueuedTimeout = { at: performance.now() + this.ms, fire };
    this.#queue.push(entry);
    if (this.#timer === undefined) this.#arm(this.ms);
    return entry;
  }

  cancel(entry: QueuedTimeout): void {
    entry.fire = undefined;
  }

  /** Drops the timer when no timeout is live any more (close()); a live one keeps it, to fire on time. */
  clearIdle(): void {
    this.#queue = this.#queue.filter((entry) => entry.fire !== undefined);
    if (this.#queue.length === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#expire(), ms);
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    let i = 0;
    // Within a millisecond counts as due: timers are scheduled in whole
    // milliseconds and may run a fraction of one before `at`.
    for (; i < this.#queue.length; i++) {
      const entry = this.#queue[i]!;
      const fire = entry.fire;
      if (fire === undefined) continue;
      if (entry.at - now >= 1) break;
      entry.fire = undefined;
      fire();
    }
    this.#queue = i === this.#queue.length ? [] : this.#queue.slice(i);
    // A `fire` that added a timeout armed the timer already.
    if (this.#timer !== undefined) return;
    const next = this.#queue.find((entry) => entry.fire !== undefined);
    if (next !== undefined) this.#arm(Math.max(1, Math.ceil(next.at - performance.now())));
    else this.#queue = [];
  }
}

/** Resolves once `work` settles or `timeouts.ms` passed, whichever comes first; never rejects. */
export function settledWithin(timeouts: TimeoutQueue, work: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const entry = timeouts.add(resolve);
    const done = () => {
      timeouts.cancel(entry);
      resolve();
    };
    work.then(done, done);
  });
}
