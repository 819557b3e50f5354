/**
 * The timing of a watchdog, apart from what a tick does, so it can be tested
 * with fake timers: one timer at most, ticks never overlap, the next tick is
 * armed only once the previous one has settled.
 */

/** How a tick went: `retry` brings the next tick forward to the retry delay. */
export type TickOutcome = 'ok' | 'retry';

export interface TickSchedulerOptions {
  /** Time from the start of a successful tick to the start of the next, in ms. */
  readonly intervalMs: number;
  /** Time from the end of a failed tick to the start of the next, in ms. */
  readonly retryDelayMs: number;
  /** One tick. A rejection counts as a failed tick and is passed to `onError`. */
  readonly tick: () => Promise<TickOutcome>;
  /** Whether anything needs ticking; nothing is armed while this is false. */
  readonly hasWork: () => boolean;
  readonly onError: (error: unknown) => void;
}

export class TickScheduler {
  readonly #options: TickSchedulerOptions;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #stopped = false;

  constructor(options: TickSchedulerOptions) {
    this.#options = options;
  }

  /** True while a tick runs. */
  get ticking(): boolean {
    return this.#inFlight !== undefined;
  }

  /** True while a tick is armed and waiting for its time. */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * New work arrived: make sure a tick comes within one interval. A tick that
   * is already armed or running keeps its schedule, so work added at any time
   * waits at most one interval (plus the running tick).
   */
  wake(): void {
    if (this.#stopped || this.#timer || this.#inFlight || !this.#options.hasWork()) return;
    this.#arm(this.#options.intervalMs);
  }

  /** The work ran out: drop the armed tick rather than let it fire for nothing. */
  idle(): void {
    if (this.#options.hasWork()) return;
    this.#disarm();
  }

  /** Stops at once; a running tick finishes on its own and arms nothing. */
  halt(): void {
    this.#stopped = true;
    this.#disarm();
  }

  /** Stops, then waits for a running tick to settle, at most `maxWaitMs`. */
  async stop(maxWaitMs: number): Promise<void> {
    this.halt();
    const running = this.#inFlight;
    if (!running) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxWaitMs);
      // Waiting for a hung tick must not, by itself, keep the process alive.
      timer.unref();
    });
    try {
      await Promise.race([running, bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => this.#run(), Math.max(0, Math.ceil(delayMs)));
    // Renewal is only worth doing while the application has other work;
    // it must never be the reason a process stays up.
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #run(): void {
    this.#timer = undefined;
    if (this.#stopped || !this.#options.hasWork()) return;
    const startedAt = performance.now();
    // `.then` runs later even when the tick settles at once, so `#inFlight`
    // is always set before it is cleared.
    this.#inFlight = this.#attempt().then((outcome) => {
      this.#inFlight = undefined;
      if (this.#stopped || !this.#options.hasWork()) return;
      const { intervalMs, retryDelayMs } = this.#options;
      // A failed tick is retried after a pause counted from its end, so a tick
      // that fails at once can never spin; a good one keeps the cadence.
      this.#arm(outcome === 'ok' ? intervalMs - (performance.now() - startedAt) : retryDelayMs);
    });
  }

  async #attempt(): Promise<TickOutcome> {
    try {
      return await this.#options.tick();
    } catch (error) {
      try {
        this.#options.onError(error);
      } catch {
        // The error sink itself failed; the schedule matters more.
      }
      return 'retry';
    }
  }
}
