import { createHash } from 'node:crypto';
import { RedisCommandError, type Script } from '@holdfast/core';
import raiseFenceSource from './raise-fence.lua';

function script(name: string, source: string): Script {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Scripts Redlock adds to core's: only what a quorum needs and one instance does not. */
export const redlockScripts = {
  raiseFence: script('raise-fence', raiseFenceSource),
} as const;

/** Decodes a raise-fence reply: the instance's counter after the call. */
export function raiseFenceReply(reply: unknown): { counter: number; stamped: boolean } {
  if (!Array.isArray(reply) || reply.length !== 2 || reply.some((v) => typeof v !== 'number')) {
    throw new RedisCommandError(`Unexpected reply from the raise-fence script: ${JSON.stringify(reply)}`);
  }
  return { counter: reply[0] as number, stamped: reply[1] === 1 };
}
