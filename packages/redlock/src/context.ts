import type { RedisPort } from '@holdfast/core/internal';
import type { ResolvedRedlockOptions } from './options.js';
import type { TimeoutQueue } from '@holdfast/core/internal';

/** What the quorum operations need from their Redlock. */
export interface RedlockContext {
  readonly instances: readonly RedisPort[];
  readonly quorum: number;
  readonly options: ResolvedRedlockOptions;
  /** Background failures: reported, never thrown. */
  readonly emitError: (error: unknown) => void;
  /**
   * Runs a clean-up off the caller's path; close() waits for those still
   * under way (bounded), so no `error` event comes after it resolved.
   */
  readonly inBackground: (work: Promise<unknown>) => void;
  /** The quorum operations' timeouts (`instanceTimeoutMs`), on one timer. */
  readonly timeouts?: TimeoutQueue;
}
