/** Command line and the sizes of every scenario, full and quick. */

export type ScenarioName = 'uncontended' | 'contention' | 'multiprocess' | 'redlock' | 'renewal' | 'semaphore' | 'read-write' | 'saturation' | 'holders';

export const ALL_SCENARIOS: readonly ScenarioName[] = ['uncontended', 'contention', 'multiprocess', 'redlock', 'renewal', 'semaphore', 'read-write', 'saturation', 'holders'];

export interface BenchOptions {
  readonly quick: boolean;
  readonly repeat: number;
  readonly scenarios: readonly ScenarioName[];
  /** Libraries to run (ids); empty runs all of them. */
  readonly libraries: readonly string[];
  readonly sizes: Sizes;
}

/** Every scenario's sizes in a full run (`--quick`: QUICK). */
const FULL = {
  warmupCycles: 300,
  cycles: 2000,
  /** Each latency measurement is taken this many times, in rotated order, to show the noise. */
  latencyRounds: 2,
  workers: 8,
  sections: 1000,
  sectionMs: 2,
  pauseMs: 2,
  /** Wall-clock cap of one contention run; a library that needs longer is reported as capped. */
  contentionCapMs: 20_000,
  processes: 4,
  redlockCycles: 1000,
  renewalLeases: 2000,
  renewalHoldMs: 10_000,
  /** Lease / lock timeout given to every library in the renewal scenario. */
  renewalTimeoutMs: 3000,
  /** Pause between the last acquisition and the renewal window (see scenario-renewal.ts). */
  renewalSettleMs: 30_000,
  semaphoreCycles: 2000,
  semaphoreSections: 800,
  memoryLeases: 2000,
  /** Sections per worker of the read-heavy read-write workload, per lock and round. */
  readWriteSections: 150,
  saturationWarmupMs: 700,
  saturationWindowMs: 1200,
  saturationRounds: 5,
  holdersWarmup: 200,
  holdersCycles: 2000,
  holdersRounds: 3,
};

export type Sizes = typeof FULL;

const QUICK: Sizes = {
  ...FULL,
  warmupCycles: 50,
  cycles: 200,
  sections: 150,
  contentionCapMs: 5000,
  redlockCycles: 150,
  renewalLeases: 500,
  renewalHoldMs: 3500,
  renewalSettleMs: 12_000,
  semaphoreCycles: 300,
  semaphoreSections: 200,
  memoryLeases: 500,
  readWriteSections: 40,
  saturationWarmupMs: 500,
  saturationWindowMs: 1500,
  saturationRounds: 1,
  holdersWarmup: 50,
  holdersCycles: 300,
  holdersRounds: 1,
};

function usage(): never {
  console.log(`Usage: pnpm bench [-- options]
  --quick            smoke mode: fewer cycles and sections, shorter holds (results/tmp/)
  --repeat N         run the whole suite N times and report the spread between runs
  --only a,b         scenarios: ${ALL_SCENARIOS.join(', ')}
  --libs a,b         library ids (see README), e.g. holdfast,redis-semaphore
  --help`);
  process.exit(0);
}

export function parseOptions(argv: readonly string[]): BenchOptions {
  let quick = false;
  let repeat = 1;
  let scenarios: ScenarioName[] = [...ALL_SCENARIOS];
  let libraries: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--') continue;
    else if (arg === '--quick') quick = true;
    else if (arg === '--repeat') repeat = Math.max(1, Number.parseInt(value(), 10) || 1);
    else if (arg === '--only') {
      scenarios = value().split(',').map((s) => s.trim()) as ScenarioName[];
      for (const s of scenarios) if (!ALL_SCENARIOS.includes(s)) throw new Error(`Unknown scenario ${s}`);
    } else if (arg === '--libs') libraries = value().split(',').map((s) => s.trim()).filter(Boolean);
    else if (arg === '--help' || arg === '-h') usage();
    else throw new Error(`Unknown option ${arg} (try --help)`);
  }
  return { quick, repeat, scenarios, libraries, sizes: quick ? QUICK : FULL };
}

export function wants(options: BenchOptions, id: string): boolean {
  return options.libraries.length === 0 || options.libraries.some((l) => id === l || id.startsWith(`${l}:`));
}
