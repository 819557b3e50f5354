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

export interface Sizes {
  readonly warmupCycles: number;
  readonly cycles: number;
  /** Each latency measurement is taken this many times, in rotated order, to show the noise. */
  readonly latencyRounds: number;
  readonly workers: number;
  readonly sections: number;
  readonly sectionMs: number;
  readonly pauseMs: number;
  /** Wall-clock cap of one contention run; a library that needs longer is reported as capped. */
  readonly contentionCapMs: number;
  readonly processes: number;
  readonly redlockCycles: number;
  readonly killAfterMs: number;
  /** How long the kill run keeps going once the instance is gone. */
  readonly afterKillMs: number;
  /** Hard cap of one library's kill run. */
  readonly killCapMs: number;
  readonly renewalLeases: number;
  readonly renewalHoldMs: number;
  /** Lease / lock timeout given to every library in the renewal scenario. */
  readonly renewalTimeoutMs: number;
  /** Pause between the last acquisition and the renewal window (see scenario-renewal.ts). */
  readonly renewalSettleMs: number;
  /** Uncontended acquire + release cycles of each semaphore, per round. */
  readonly semaphoreCycles: number;
  /** Sections of the semaphore's forced hand-offs (`workers` workers over 3 permits, `sectionMs` each), per round. */
  readonly semaphoreSections: number;
  /** Leases held at once for each shape of the memory measurement (semaphore scenario). */
  readonly memoryLeases: number;
  /** Sections per worker of the read-heavy read-write workload, per lock and round. */
  readonly readWriteSections: number;
  /** Saturation scenario: loops running before the measured window of each row (first round; later ones need less). */
  readonly saturationWarmupMs: number;
  /** Saturation scenario: the measured window of each row, per round. */
  readonly saturationWindowMs: number;
  readonly saturationRounds: number;
  /** Holders scenario: cycles before the measured ones, per row, n and round. */
  readonly holdersWarmup: number;
  /** Holders scenario: measured cycles per row, n and round. */
  readonly holdersCycles: number;
  readonly holdersRounds: number;
}

const FULL: Sizes = {
  warmupCycles: 300,
  cycles: 2000,
  latencyRounds: 2,
  workers: 8,
  sections: 1000,
  sectionMs: 2,
  pauseMs: 2,
  contentionCapMs: 20_000,
  processes: 4,
  redlockCycles: 1000,
  killAfterMs: 1500,
  afterKillMs: 12_000,
  killCapMs: 20_000,
  renewalLeases: 2000,
  renewalHoldMs: 10_000,
  renewalTimeoutMs: 3000,
  renewalSettleMs: 30_000,
  semaphoreCycles: 2000,
  semaphoreSections: 800,
  memoryLeases: 2000,
  readWriteSections: 150,
  saturationWarmupMs: 700,
  saturationWindowMs: 1200,
  saturationRounds: 5,
  holdersWarmup: 200,
  holdersCycles: 2000,
  holdersRounds: 3,
};

const QUICK: Sizes = {
  ...FULL,
  warmupCycles: 50,
  cycles: 200,
  sections: 150,
  contentionCapMs: 5000,
  redlockCycles: 150,
  killAfterMs: 500,
  afterKillMs: 2500,
  killCapMs: 5000,
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
