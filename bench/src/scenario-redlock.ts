import type { Sizes } from './options.js';
import type { RedisServer } from './processes.js';
import type { MultiLibrary } from './redlock-libraries.js';
import { runUncontended, type UncontendedResult } from './scenario-uncontended.js';

/** Scenario 4: Redlock over independent instances. */

export interface RedlockUncontended {
  readonly instances: number;
  readonly results: UncontendedResult[];
}

export async function runRedlockUncontended(
  libraries: readonly MultiLibrary[],
  servers: readonly RedisServer[],
  sizes: Sizes,
  log: (line: string) => void,
): Promise<RedlockUncontended[]> {
  const out: RedlockUncontended[] = [];
  for (const instances of [3, 5]) {
    const ports = servers.slice(0, instances).map((s) => s.port);
    log(` ${instances} instances`);
    const results = await runUncontended(
      libraries.map((lib) => ({ id: lib.id, label: lib.label, settings: lib.settings, open: () => lib.open(ports) })),
      servers.slice(0, instances).map((s) => s.admin),
      { warmup: sizes.warmupCycles, cycles: sizes.redlockCycles, rounds: sizes.latencyRounds, floorId: 'floor', log },
    );
    out.push({ instances, results });
  }
  return out;
}
