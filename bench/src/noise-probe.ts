import os from 'node:os';

/**
 * How quiet the machine is right now: the load average, and how often this process was kept off the CPU for
 * more than a millisecond while spinning on setImmediate for `ms`.
 */

export interface NoiseProbe {
  readonly scenario: string;
  readonly load1: number;
  /** Gaps over 1 ms between two event-loop turns, per second of probing. */
  readonly stallsPerSec: number;
  readonly maxStallMs: number;
}

export async function probeNoise(scenario: string, ms = 300): Promise<NoiseProbe> {
  const end = performance.now() + ms;
  let last = performance.now();
  let stalls = 0;
  let maxStall = 0;
  while (last < end) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const now = performance.now();
    const gap = now - last;
    if (gap > 1) stalls++;
    maxStall = Math.max(maxStall, gap);
    last = now;
  }
  return { scenario, load1: os.loadavg()[0]!, stallsPerSec: (stalls / ms) * 1000, maxStallMs: maxStall };
}
