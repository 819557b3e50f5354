/** Payload of `countedDown`: a count-down of a latch, by this client, was applied. */
export interface CountedDownEvent {
  /** The latch's name. */
  readonly name: string;
  /** Always `latch`. */
  readonly kind: 'latch';
  /** The count after it (0: every waiter was woken). */
  readonly count: number;
}
