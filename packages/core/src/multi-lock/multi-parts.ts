import { performance } from 'node:perf_hooks';
import { holdOf, type Lease } from '../lease/lease.js';
import { driftMarginMs } from '../options/options.js';
import { onAbort } from '../port/abort-listeners.js';

/**
 * The parts one multi-lock acquisition has taken so far. Groups of different
 * hash slots are taken one after another, so the first ones are held while
 * the acquisition waits for the later ones; nothing else renews them then
 * (the watchdog only renews leases with `autoRenew`), and a part whose lease
 * ran out during that wait would be handed out as a lease holding only some
 * names. So: parts are renewed every third of their lease while the
 * acquisition waits, their loss aborts `lostSignal` (the wait for the later
 * groups stops and the acquisition starts again), and before the lease is
 * returned every part is brought back to its full lease.
 */
export class TakenParts {
  readonly leases = new Map<string, Lease>();
  readonly #lost = new AbortController();
  /** What stop() removes: the watch on each part's signal. */
  readonly #unwatch: (() => void)[] = [];
  #stopped = false;
  readonly #driftFactor: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(driftFactor: number) {
    this.#driftFactor = driftFactor;
  }

  /** Aborts (with the part's loss as its reason) when any part taken so far is lost. */
  get lostSignal(): AbortSignal {
    return this.#lost.signal;
  }

  /** Adds parts just granted: from now on they are kept held and watched. */
  add(leases: readonly Lease[]): void {
    for (const lease of leases) {
      this.leases.set(lease.name, lease);
      const signal = lease.signal;
      if (signal.aborted) this.#lost.abort(signal.reason);
      else if (!this.#stopped) this.#unwatch.push(onAbort(signal, () => this.#lost.abort(signal.reason)));
    }
    this.#schedule();
  }

  /**
   * Extends every part whose lease ahead fell below its full length by more
   * than the drift margin (all of them when `all`: after the connection closed,
   * a server restarted empty may have forgotten any). False when a part is
   * gone: extended in vain, or lost before.
   */
  async refresh(all: boolean): Promise<boolean> {
    const now = performance.now();
    const stale = [...this.leases.values()].filter((lease) => {
      const hold = holdOf(lease);
      const margin = driftMarginMs(hold.leaseMs, this.#driftFactor);
      return all || hold.deadline - now < hold.leaseMs - 2 * margin;
    });
    const results = await Promise.allSettled(stale.map((lease) => lease.extend()));
    if (results.some((result) => result.status === 'rejected')) return false;
    for (const lease of this.leases.values()) if (!lease.isHeld) return false;
    return true;
  }

  /** Stops renewing and watching (the parts themselves are left as they are). */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#stopped = true;
    for (const unwatch of this.#unwatch.splice(0)) unwatch();
  }

  /** The next renewal: a third of the shortest lease among parts the watchdog does not renew. */
  #schedule(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    let everyMs = Infinity;
    for (const lease of this.leases.values()) if (!holdOf(lease).autoRenew) everyMs = Math.min(everyMs, lease.leaseMs / 3);
    if (everyMs === Infinity) return;
    this.#timer = setTimeout(() => void this.#renew(), Math.max(1, Math.floor(everyMs)));
    this.#timer.unref?.();
  }

  async #renew(): Promise<void> {
    this.#timer = undefined;
    const due = [...this.leases.values()].filter((lease) => !holdOf(lease).autoRenew && lease.isHeld);
    // A failed renewal is not an error of its own: a part that cannot be kept
    // is declared lost at its deadline, which aborts lostSignal.
    await Promise.allSettled(due.map((lease) => lease.extend()));
    this.#schedule();
  }
}
