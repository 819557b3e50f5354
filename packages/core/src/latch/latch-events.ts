/** Payload of `countedDown`: a count-down of a latch, by this client, was applied (not one at 0, which does nothing). */
export interface CountedDownEvent {
  /** The latch's name. */
  readonly name: string;
  /** Always `latch`. */
  readonly kind: 'latch';
  /** The count after it (0: every waiter was woken). */
  readonly count: number;
}

/** The latch's events of a `LockClient`, event → listener arguments (part of `LockClientEvents`). */
export interface LatchEvents {
  /** A count-down latch's `countDown()` was applied (`kind: 'latch'`). */
  countedDown: [event: CountedDownEvent];
}
