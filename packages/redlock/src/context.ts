import type { RedisLike } from '@holdfast/core';
import type { ResolvedRedlockOptions } from './options.js';

/** What the quorum operations need from their Redlock. */
export interface RedlockContext {
  readonly instances: readonly RedisLike[];
  readonly quorum: number;
  readonly options: ResolvedRedlockOptions;
  /** Background failures: reported, never thrown. */
  readonly emitError: (error: unknown) => void;
}
