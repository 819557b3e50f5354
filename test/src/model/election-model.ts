/**
 * The reference model of one election: who leads and who waits, in order,
 * after a sequence of campaign / resign / proclaim / give-up calls, whatever
 * the Redis scripts do underneath. Candidates are numbered as they stand.
 */
export class ElectionModel {
  /** The leading candidate and its published value, or null. */
  leader: { id: number; value: string } | null = null;
  /** Waiting candidates, first in line first. */
  readonly queue: { id: number; value: string }[] = [];
  #nextId = 0;

  /** A candidate stands: it leads at once when nobody leads or waits, else it queues. Returns its id. */
  campaign(value: string): number {
    const id = this.#nextId++;
    if (this.leader === null && this.queue.length === 0) this.leader = { id, value };
    else this.queue.push({ id, value });
    return id;
  }

  /** The leader resigns: the first in line leads. Returns the new leader's id, if any. */
  resign(): number | undefined {
    this.leader = this.queue.shift() ?? null;
    return this.leader?.id;
  }

  proclaim(value: string): void {
    this.leader!.value = value;
  }

  /** A waiting candidate gives up: it leaves the line and never leads. */
  giveUp(id: number): void {
    const at = this.queue.findIndex((c) => c.id === id);
    this.queue.splice(at, 1);
  }
}
