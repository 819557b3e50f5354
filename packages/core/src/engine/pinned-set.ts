/** The member every PinnedSet keeps, never visible through it. */
const PIN = Symbol('pin');

/**
 * A Set whose table never empties. V8 shrinks a Set's table (a new table,
 * built in its C++ runtime) whenever a delete leaves fewer entries than half
 * its buckets, which an empty Set of the smallest size always is: a client
 * taking and releasing one lock at a time would rebuild its hold set (and
 * its deadline set) on every release. One pinned member keeps the smallest
 * table at its threshold; a larger one still shrinks as it empties. The
 * holds a client tracks go through here; iteration, rare (a re-entry's
 * lookup, the deadline sweep, close()), skips the pin.
 */
export class PinnedSet<T extends object> {
  readonly #set = new Set<T | typeof PIN>([PIN]);

  get size(): number {
    return this.#set.size - 1;
  }

  add(value: T): void {
    this.#set.add(value);
  }

  has(value: T): boolean {
    return this.#set.has(value);
  }

  delete(value: T): boolean {
    return this.#set.delete(value);
  }

  clear(): void {
    this.#set.clear();
    this.#set.add(PIN);
  }

  /** In insertion order; a member added while iterating is visited, one deleted before its turn is not (as a Set). */
  *[Symbol.iterator](): IterableIterator<T> {
    for (const value of this.#set) if (value !== PIN) yield value as T;
  }
}
