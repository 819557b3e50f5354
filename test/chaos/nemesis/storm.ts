/**
 * A nemesis: a fault applied again and again until stopped. Actions run one
 * at a time; their failures are counted, never thrown into the void.
 */
export interface Nemesis {
  readonly name: string;
  /** Actions that completed, and that failed (e.g. the target was down at that moment). */
  readonly stats: { applied: number; failed: number };
  stop(): Promise<void>;
}

export function storm(name: string, everyMs: () => number, action: () => Promise<unknown>): Nemesis {
  const stats = { applied: 0, failed: 0 };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const running = (async () => {
    while (!stopped) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, everyMs());
      });
      if (stopped) break;
      try {
        await action();
        stats.applied++;
      } catch {
        stats.failed++;
      }
    }
  })();
  return {
    name,
    stats,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await running;
    },
  };
}

/** A random whole number of ms in [min, max]. */
export function jitter(min: number, max: number): () => number {
  return () => min + Math.floor(Math.random() * (max - min + 1));
}
