import type { ChildProcess } from 'node:child_process';

/**
 * The next message of `type` from a forked bench child; rejects when the child reports `failed`, exits first,
 * or `ms` pass.
 */
export function expectChildMessage<M extends { type: string }, T extends M['type']>(
  child: ChildProcess,
  type: T,
  ms: number,
  who: string,
): Promise<Extract<M, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${who}: no ${type} within ${ms} ms`)), ms);
    const onMessage = (message: M) => {
      if (message.type === 'failed') finish(new Error(`${who} failed: ${(message as { message?: unknown }).message}`));
      else if (message.type === type) finish(undefined, message as Extract<M, { type: T }>);
    };
    const onExit = () => finish(new Error(`${who} exited before ${type}`));
    const finish = (error?: Error, value?: Extract<M, { type: T }>) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(value!);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
