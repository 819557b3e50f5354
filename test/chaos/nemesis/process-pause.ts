import { sleep } from '@holdfast/test-utils';

/** Anything that can be frozen and thawed: a worker process, a redis-server. */
export interface Pausable {
  pause(): void;
  resume(): void;
}

/**
 * Freezes a process (SIGSTOP: a GC pause or a stopped VM, seen from outside)
 * for `ms`, then thaws it. Resolves with the monotonic time of the resume, on
 * the same clock as the histories.
 */
export async function pauseProcess(target: Pausable, ms: number): Promise<bigint> {
  target.pause();
  try {
    await sleep(ms);
  } finally {
    target.resume();
  }
  return process.hrtime.bigint();
}
