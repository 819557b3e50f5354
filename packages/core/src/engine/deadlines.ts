import { performance } from 'node:perf_hooks';

/**
 * One timer for every lease deadline of a client. A deadline that moves later
 * (renewal, extend) leaves the timer as it is: it fires at the earliest
 * deadline it was armed for, rescans, and re-arms. Only an earlier deadline
 * re-arms at once. The last entry leaving leaves the timer (unref'd) armed
 * too. `clear()` (the client's close()) drops it.
 */
export interface Deadlined {
  readonly deadline: number;
}

export class DeadlineTimer<T extends Deadlined> {
  readonly #entries = new Set<T>();
  readonly #onExpired: (entry: T) => void;
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Infinity;

  constructor(onExpired: (entry: T) => void) {
    this.#onExpired = onExpired;
  }

  get size(): number {
    return this.#entries.size;
  }

  add(entry: T): void {
    this.#entries.add(entry);
    this.#arm(entry.deadline);
  }

  /** Call after an entry's deadline changed. */
  update(entry: T): void {
    // Renewals call this for every lease on every tick: a deadline moved later
    // than the armed one (the usual case) returns on one comparison.
    if (entry.deadline >= this.#armedFor || !this.#entries.has(entry)) return;
    this.#arm(entry.deadline);
  }

  delete(entry: T): void {
    // The timer stays: it finds nothing due when it fires, or the next entry's deadline.
    this.#entries.delete(entry);
  }

  clear(): void {
    this.#entries.clear();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
  }

  /** Expires, synchronously, every entry whose deadline is at or before `now`. */
  sweep(now = performance.now()): void {
    let next = Infinity;
    // Deleting the entry being visited is safe while iterating a (Pinned)Set; an entry
    // added by onExpired is visited too, and re-arms the timer itself.
    for (const entry of this.#entries) {
      if (entry.deadline <= now) {
        this.#entries.delete(entry);
        this.#onExpired(entry);
      } else {
        next = Math.min(next, entry.deadline);
      }
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
    if (next !== Infinity) this.#arm(next);
  }

  #arm(deadline: number): void {
    if (deadline >= this.#armedFor) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedFor = deadline;
    this.#timer = setTimeout(() => this.sweep(), Math.max(0, Math.ceil(deadline - performance.now())));
    this.#timer.unref();
  }
}
