import { RedisCommandError } from '@holdfast/core';
import { defineScript, replies } from '@holdfast/core/internal';
import raiseFenceSource from './raise-fence.lua';

/** Scripts Redlock adds to core's: only what a quorum needs and one instance does not. */
export const redlockScripts = {
  raiseFence: defineScript('raise-fence', raiseFenceSource),
} as const;

/** Decodes a raise-fence reply: the instance's counter after the call. */
export function raiseFenceReply(reply: unknown): { counter: number; stamped: boolean } {
  const values = Array.isArray(reply) ? reply.map(replies.int) : [];
  if (values.length !== 2 || values.some((v) => v === undefined)) {
    throw new RedisCommandError(`Unexpected reply from the raise-fence script: ${JSON.stringify(reply)}`);
  }
  return { counter: values[0]!, stamped: values[1] === 1 };
}
