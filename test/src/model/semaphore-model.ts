/**
 * The reference model of one semaphore: what a sequence of tryAcquire /
 * release / expiry / extend / count / resize calls must answer, whatever the
 * Redis scripts do underneath. Leases are numbered in the order they were granted.
 */
export class SemaphoreModel {
  count: number;
  /** Live leases: id → permits. */
  readonly holders = new Map<number, number>();
  #nextId = 0;

  constructor(count: number) {
    this.count = count;
  }

  get used(): number {
    let used = 0;
    for (const permits of this.holders.values()) used += permits;
    return used;
  }

  /** Nobody waits in these programs: granted exactly when the permits fit. Returns the lease id, or null. */
  tryAcquire(permits: number): number | null {
    if (permits > this.count || this.used + permits > this.count) return null;
    const id = this.#nextId++;
    this.holders.set(id, permits);
    return id;
  }

  /** A lease given back, by release or by its lease's end. */
  drop(id: number): void {
    this.holders.delete(id);
  }

  /** Lowering the count below the permits in use takes none back. */
  available(): number {
    return Math.max(0, this.count - this.used);
  }
}
