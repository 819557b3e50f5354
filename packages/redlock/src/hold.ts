import { Hold, type LockKeys } from '@holdfast/core/internal';

/**
 * Core's per-owner hold, plus what a quorum needs to know per instance.
 * Arrays are indexed like the Redlock's instances.
 */
export class RedlockHold extends Hold {
  /** Holds this owner has on each instance, as last reported; undefined where never granted or unknown. */
  readonly counts: (number | undefined)[];
  /** Instances that confirmed this hold's fencing token. */
  readonly raised: boolean[];
  /** The acquire call that granted this hold on each instance, if any (answered or still on its way). */
  readonly granting: readonly (Promise<unknown> | undefined)[];
  /** Instances waiting for this hold to be put back on them (see restore.ts). */
  readonly restoring = new Set<number>();

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
    granting?: readonly (Promise<unknown> | undefined)[];
  }) {
    super({ ...init, count: 1 });
    this.counts = init.counts;
    this.raised = init.raised;
    this.granting = init.granting ?? [];
  }
}
