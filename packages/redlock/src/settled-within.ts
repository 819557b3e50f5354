import type { TimeoutQueue } from '@holdfast/core/internal';

/** Resolves once `work` settles or `timeouts.ms` passed, whichever comes first; never rejects. */
export function settledWithin(timeouts: TimeoutQueue, work: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const entry = timeouts.add(resolve);
    const done = () => {
      timeouts.cancel(entry);
      resolve();
    };
    work.then(done, done);
  });
}
