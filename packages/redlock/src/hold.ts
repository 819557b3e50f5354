import { Hold, MUTEX, type LockKeys } from '@holdfast/core/internal';

const NONE: readonly (Promise<unknown> | undefined)[] = [];

/**
 * `n` times `value`, as a packed array: `new Array(n).fill()` makes a holey
 * one and fills it in the runtime (C++), on every acquisition.
 */
export function filled<T>(n: number, value: T): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(value);
  return out;
}

/**
 * Core's per-owner hold, plus what a quorum needs to know per instance.
 * Arrays are indexed like the Redlock's instances.
 */
export class RedlockHold extends Hold {
  /** Holds this owner has on each instance, as last reported; undefined where never granted or unknown. */
  readonly counts: (number | undefined)[];
  /** Instances that confirmed this hold's fencing token. */
  readonly raised: boolean[];
  /** The string lock take.lua wrote on each instance where it granted the hold: its last release there tries release-taken.lua with it (cleared by a restore). */
  readonly takenOn: (string | undefined)[];
  /** The acquire call that granted this hold on each instance, if any (answered or still on its way). */
  readonly granting: readonly (Promise<unknown> | undefined)[];
  #restoring: Set<number> | undefined;

  constructor(init: {
    name: string;
    keys: LockKeys;
    owner: string;
    token: number;
    leaseMs: number;
    deadline: number;
    autoRenew: boolean;
    counts: (number | undefined)[];
    raised: boolean[];
    takenOn?: (string | undefined)[];
    granting?: readonly (Promise<unknown> | undefined)[];
  }) {
    // Fields listed, not spread: one hold is built per acquisition.
    super({
      name: init.name,
      keys: init.keys,
      owner: init.owner,
      token: init.token,
      count: 1,
      leaseMs: init.leaseMs,
      deadline: init.deadline,
      autoRenew: init.autoRenew,
      // Redlock runs the mutex's scripts on every instance.
      kind: MUTEX,
    });
    this.counts = init.counts;
    this.raised = init.raised;
    this.takenOn = init.takenOn ?? filled<string | undefined>(init.raised.length, undefined);
    this.granting = init.granting ?? NONE;
  }

  /** Instances waiting for this hold to be put back on them (see restore.ts); made on first use. */
  get restoring(): Set<number> {
    return (this.#restoring ??= new Set<number>());
  }
}
