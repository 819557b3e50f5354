import type { Attributes, UpDownCounter } from '@opentelemetry/api';
import type { Attempt } from './contain.js';

/** The holds counted in under one attribute set. */
interface Counted {
  readonly attributes: Attributes;
  count: number;
}

/**
 * The `holdfast.lock.held` up-down counter's bookkeeping: which acquisitions
 * it counted in (by their context object, which the hold's release or loss
 * carries back) and how much it added under each attribute set, so
 * `clear()` can take back exactly what this instrumentation added.
 */
export class HeldCount {
  readonly #counter: UpDownCounter;
  readonly #attempt: Attempt;
  // Weak: a hold that never reports its end (its lease dropped unreleased)
  // keeps nothing alive here; the totals below are bounded by the attribute sets.
  #counted = new WeakMap<object, Counted>();
  readonly #totals = new Map<string, Counted>();

  constructor(counter: UpDownCounter, attempt: Attempt) {
    this.#counter = counter;
    this.#attempt = attempt;
  }

  /** Counts in the hold granted by `acquisition`. */
  countIn(acquisition: object, attributes: Attributes): void {
    // Only what reached the counter is remembered, so clear() never takes back more.
    if (!this.#attempt(() => this.#counter.add(1, attributes))) return;
    const key = JSON.stringify(attributes);
    let total = this.#totals.get(key);
    if (!total) this.#totals.set(key, (total = { attributes, count: 0 }));
    total.count += 1;
    this.#counted.set(acquisition, total);
  }

  /**
   * Counts out the hold granted by `acquisition`, if it was counted in (holds
   * taken before the instrumentation started, or before its last
   * `clear()`, were not, and are never counted out).
   */
  countOut(acquisition: object | undefined): void {
    const total = acquisition && this.#counted.get(acquisition);
    if (!total) return;
    this.#counted.delete(acquisition);
    if (!this.#attempt(() => this.#counter.add(-1, total.attributes))) return;
    total.count -= 1;
    if (total.count === 0) this.#totals.delete(JSON.stringify(total.attributes));
  }

  /** Takes every hold counted in back out, and forgets them: their ends will not count them out again. */
  clear(): void {
    for (const total of this.#totals.values()) this.#attempt(() => this.#counter.add(-total.count, total.attributes));
    this.#totals.clear();
    this.#counted = new WeakMap();
  }
}
