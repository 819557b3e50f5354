import { performance } from 'node:perf_hooks';

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
 * is cancelled (the usual case: the answer came first) is marked, and dropped
 * once nothing older is live. Every Redis call of a client (`callRedis`,
 * through its policy) and every quorum operation of a Redlock share one.
 */
export class TimeoutQueue {
  readonly ms: number;
  #queue: QueuedTimeout[] = [];
  /** Entries before this index are done (cancelled or fired). */
  #head = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Set while #expire walks the queue: cancel() then only marks (the walk owns the array). */
  #expiring = false;

  constructor(ms: number) {
    this.ms = ms;
  }

  /** Entries held: the live ones, and those done behind an older live one. */
  get size(): number {
    return this.#queue.length - this.#head;
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
    if (this.#expiring) return;
    // Calls answered in the order they were sent leave nothing behind: the
    // queue holds only what is still pending (no entry outlives its call by
    // the whole timeout, which would age it into the old generation).
    const queue = this.#queue;
    let head = this.#head;
    while (head < queue.length && queue[head]!.fire === undefined) head++;
    if (head === queue.length) {
      while (queue.length > 0) queue.pop();
      head = 0;
    } else if (head >= 64 && head * 2 >= queue.length) {
      this.#queue = queue.slice(head);
      head = 0;
    }
    this.#head = head;
  }

  /** Drops the timer when no timeout is live any more (close()); a live one keeps it, to fire on time. */
  clearIdle(): void {
    this.#queue = this.#queue.slice(this.#head).filter((entry) => entry.fire !== undefined);
    this.#head = 0;
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
    let i = this.#head;
    this.#expiring = true;
    // Within a millisecond counts as due: timers are scheduled in whole
    // milliseconds and may run a fraction of one before `at`.
    for (; i < this.#queue.length; i++) {
      const entry = this.#queue[i]!;
      const fire = entry.fire;
      if (fire === undefined) continue;
      if (entry.at - now >= 1) break;
      entry.fire = undefined;
      try {
        fire();
      } catch {
        // A timeout's callback must not throw; if one does, the others still fire.
      }
    }
    this.#expiring = false;
    // A `fire` may have added entries (and armed the timer) or cancelled some.
    this.#queue = this.#queue.slice(i);
    this.#head = 0;
    if (this.#timer !== undefined) return;
    const next = this.#queue.find((entry) => entry.fire !== undefined);
    if (next !== undefined) this.#arm(Math.max(1, Math.ceil(next.at - performance.now())));
    else this.#queue = [];
  }
}
