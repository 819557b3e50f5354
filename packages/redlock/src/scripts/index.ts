import { RedisCommandError } from '@holdfast/core';
import { defineScript, lockFragments, replies } from '@holdfast/core/internal';
import raiseCounter from './_raise-counter.lua';
import raiseFenceSource from './raise-fence.lua';
import restoreHoldSource from './restore-hold.lua';

/** Redlock's own Lua fragments and the mutex lock's layout (`lockstate`); core's shared ones come after them. */
const own = { raisecounter: raiseCounter, ...lockFragments };

/** Scripts Redlock adds to core's: only what a quorum needs and one instance does not. */
export const redlockScripts = {
  raiseFence: defineScript('raise-fence', raiseFenceSource, own),
  restoreHold: defineScript('restore-hold', restoreHoldSource, own),
} as const;

function ints(script: string, reply: unknown, length: number): number[] {
  const values = Array.isArray(reply) ? reply.map(replies.int) : [];
  if (values.length !== length || values.some((v) => v === undefined)) {
    throw new RedisCommandError(`Unexpected reply from the ${script} script: ${JSON.stringify(reply)}`);
  }
  return values as number[];
}

/** Decodes a raise-fence reply: the instance's counter after the call. */
export function raiseFenceReply(reply: unknown): { counter: number; stamped: boolean } {
  const [counter, stamped] = ints('raise-fence', reply, 2);
  return { counter: counter!, stamped: stamped === 1 };
}

/** What restore-hold found at the lock key: absent (now ours again), ours already, or another owner's. */
export type RestoreStatus = 'restored' | 'held' | 'taken';

/** Decodes a restore-hold reply: what was done, and the instance's counter after the call. */
export function restoreHoldReply(reply: unknown): { status: RestoreStatus; counter: number } {
  const [code, counter] = ints('restore-hold', reply, 2);
  const status = code === 1 ? 'restored' : code === 0 ? 'held' : code === -2 ? 'taken' : undefined;
  if (status === undefined) {
    throw new RedisCommandError(`Unexpected reply from the restore-hold script: ${JSON.stringify(reply)}`);
  }
  return { status, counter: counter! };
}
