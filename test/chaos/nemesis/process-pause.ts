import { sleep } from '@holdfast/test-utils';

/** Anything that can be frozen and thawed: a worker process, a redis-server. */
export interface Pausable {
  pause(): void;
  resume(): void;
}

/**
 * Freezes a process (SIGSTOP: a GC pause or a stopped VM, seen from outside)
 * for `ms`, then thaws it. Resolves with the monotonic time just before the
 * resume, on the same clock as the histories.
 */
export async function pauseProcess(target: Pausable, ms: number): Promise<bigint> {
  target.pause();
  // Stamped before SIGCONT: whatever the process records after this stamp
  // happened after its resume (stamped after, its first steps could precede it).
  let resumedAt = process.hrtime.bigint();
  try {
    await sleep(ms);
    resumedAt = process.hrtime.bigint();
  } finally {
    target.resume();
  }
  return resumedAt;
}
