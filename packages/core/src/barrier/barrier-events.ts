import type { BarrierBrokenError, BarrierBrokenReason } from './barrier-errors.js';

/** Payload of `tripped`: a barrier this client waited at tripped (once per party of this client). */
export interface TrippedEvent {
  /** The barrier's name. */
  readonly name: string;
  /** Always `barrier`. */
  readonly kind: 'barrier';
  /** The generation that tripped. */
  readonly generation: number;
  /** How long this party waited, in ms. */
  readonly waitedMs: number;
}

/** Payload of `broken`: a generation a party of this client waited in was broken. */
export interface BrokenEvent {
  /** The barrier's name. */
  readonly name: string;
  /** Always `barrier`. */
  readonly kind: 'barrier';
  /** The generation that was broken. */
  readonly generation: number;
  /** Why. */
  readonly reason: BarrierBrokenReason;
  /** True when this party broke it (it gave up, or was itself the party lost). */
  readonly byThisParty: boolean;
  /** What the other parties got. */
  readonly error: BarrierBrokenError;
}

/** The barrier's events of a `LockClient`, event → listener arguments (part of `LockClientEvents`). */
export interface BarrierEvents {
  /** A barrier a party of this client waited at tripped (`kind: 'barrier'`). */
  tripped: [event: TrippedEvent];
  /** A barrier generation a party of this client waited in was broken (`kind: 'barrier'`). */
  broken: [event: BrokenEvent];
}
