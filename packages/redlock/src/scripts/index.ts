import { RedisCommandError, defineScript } from '@holdfast/core';
import raiseFenceSource from './raise-fence.lua';

/** Scripts Redlock adds to core's: only what a quorum needs and one instance does not. */
export const redlockScripts = {
  raiseFence: defineScript('raise-fence', raiseFenceSource),
} as const;

/** Decodes a raise-fence reply: the instance's counter after the call. */
export function raiseFenceReply(reply: unknown): { counter: number; stamped: boolean } {
  if (!Array.isArray(reply) || reply.length !== 2 || reply.some((v) => typeof v !== 'number')) {
    throw new RedisCommandError(`Unexpected reply from the raise-fence script: ${JSON.stringify(reply)}`);
  }
  return { counter: reply[0] as number, stamped: reply[1] === 1 };
}
