import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildInfo, type BuildInfo } from './build-info.js';
import { SINGLE_INSTANCE, type Locker } from './libraries.js';
import { SATURATION_ROWS } from './saturation-rows.js';
import { HANDOFF_FLOOR_ID } from './handoff-floor.js';
import { RedisServer } from './processes.js';
import { markdownTable, spreadPct } from './stats.js';
import { installStrayErrorHandlers } from './stray-errors.js';

/**
 * Server instructions per uncontended acquire + release, counted by callgrind: a figure that does not move
 * with the machine's load. redis-server runs under `valgrind --tool=callgrind` with collection on only inside
 * `readQueryFromClient` (read, parse, run the command, scripts included) and `handleClientsWithPendingWrites`
 * (write the replies): the work each request causes, and nothing the server does on its own clock (cron,
 * expiry cycles, idle event-loop turns), whose amount depends on how long the run takes. Which part of a
 * cycle went where was measured once with a per-call breakdown; its findings are in results/findings.md.
 */

installStrayErrorHandlers();

const VALGRIND = '/usr/bin/valgrind';

interface Options {
  cycles: number;
  warmup: number;
  libraries: string[];
}

interface LibraryCount {
  readonly id: string;
  readonly label: string;
  readonly perCycle: number;
}

interface PassCounts {
  readonly redis: string;
  /** Instructions of an empty phase (two markers), subtracted from every phase. */
  readonly markerIr: number;
  readonly libraries: LibraryCount[];
}

interface CallgrindReport {
  readonly date: string;
  readonly build: BuildInfo;
  readonly args: string[];
  readonly redis: string;
  readonly valgrind: string;
  readonly cycles: number;
  readonly warmup: number;
  /** Whether Redis's hash seed was fixed (fixed-seed.c), and why not. */
  readonly seed: string;
  readonly passes: PassCounts[];
  readonly durationMs: number;
}

function parseArgs(argv: readonly string[]): Options {
  // Multiples of 50: every library's script calls then hold a whole number of Lua GC steps.
  const opts: Options = { cycles: 200, warmup: 50, libraries: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--') continue;
    else if (arg === '--cycles') opts.cycles = Number.parseInt(value(), 10);
    else if (arg === '--libs') opts.libraries = value().split(',').map((s) => s.trim()).filter(Boolean);
    else if (arg === '--help' || arg === '-h') {
      console.log(`Usage: pnpm --filter @holdfast/bench run bench:callgrind [-- options]
  --cycles N     uncontended acquire + release cycles per library and pass (default 200)
  --libs a,b     library ids (default: every library of the uncontended scenario); the
                 saturation scenario's holdfast:rw-read, holdfast:semaphore and
                 redis-semaphore:semaphore only when named`);
      process.exit(0);
    } else throw new Error(`Unknown option ${arg} (try --help)`);
  }
  if (!Number.isInteger(opts.cycles) || opts.cycles < 1) throw new Error('--cycles must be a positive integer');
  return opts;
}

/** The instructions of the dumps the server wrote since the last call, summed (each file read once, then removed). */
class Dumps {
  readonly #dir: string;
  readonly #prefix: string;
  #next = 1;

  constructor(dir: string, pid: number) {
    this.#dir = dir;
    this.#prefix = `cg.${pid}.`;
  }

  take(): { total: number; dumps: number } {
    const files = readdirSync(this.#dir)
      .filter((f) => f.startsWith(this.#prefix))
      .map((f) => Number(f.slice(this.#prefix.length)))
      .filter((n) => n >= this.#next)
      .sort((a, b) => a - b);
    let total = 0;
    for (const n of files) {
      const file = path.join(this.#dir, `${this.#prefix}${n}`);
      const text = readFileSync(file, 'utf8');
      const line = /^(?:totals|summary):\s*(\d+)/m.exec(text);
      if (!line) throw new Error(`${file}: no totals in the callgrind output`);
      total += Number(line[1]);
      rmSync(file);
      this.#next = n + 1;
    }
    return { total, dumps: files.length };
  }
}

/**
 * The environment that fixes Redis's hash seed (see fixed-seed.c), built with the system's C compiler;
 * without one the passes run on random seeds and the report says so.
 */
function fixedSeed(dir: string): { env?: Record<string, string>; note: string } {
  const library = path.join(dir, 'fixed-seed.so');
  const urandom = path.join(dir, 'urandom');
  try {
    const source = fileURLToPath(new URL('fixed-seed.c', import.meta.url));
    execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', library, source, '-ldl'], { stdio: 'pipe' });
  } catch (error) {
    return { note: `hash seed random: could not build fixed-seed.c (${error instanceof Error ? error.message.split('\n')[0] : String(error)})` };
  }
  // Any fixed bytes will do; Redis reads 64.
  writeFileSync(urandom, Buffer.alloc(4096, 'holdfast'));
  return { env: { LD_PRELOAD: library, HOLDFAST_BENCH_URANDOM: urandom }, note: 'hash seed fixed (fixed-seed.c preloaded)' };
}

async function onePass(pass: number, opts: Options, seedEnv: Record<string, string> | undefined, log: (line: string) => void): Promise<PassCounts> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'holdfast-callgrind-'));
  const server = await RedisServer.start({
    ...(seedEnv ? { env: seedEnv } : {}),
    under: [
      VALGRIND,
      '--tool=callgrind',
      '--collect-atstart=no',
      '--toggle-collect=readQueryFromClient',
      '--toggle-collect=handleClientsWithPendingWrites',
      '--dump-before=echoCommand',
      `--callgrind-out-file=${dir}/cg.%p`,
    ],
    // Under valgrind a script runs tens of times slower: no slowlog entry may depend on that.
    args: ['--slowlog-log-slower-than', '-1'],
    startMs: 60_000,
  });
  const dumps = new Dumps(dir, server.pid!);
  let markers = 0;
  // Every marker closes the phase before it; ECHO is answered after the dump is written.
  const mark = async (): Promise<number> => {
    await server.admin.echo(`phase ${++markers}`);
    const { total, dumps: n } = dumps.take();
    if (n !== 1) throw new Error(`expected one dump per marker, found ${n}`);
    return total;
  };
  try {
    await mark();
    // What a marker pair costs on its own (median of 5 empty phases).
    const empties: number[] = [];
    for (let i = 0; i < 5; i++) empties.push(await mark());
    const markerIr = empties.sort((a, b) => a - b)[2]!;
    const libraries: LibraryCount[] = [];
    const contenders = [
      ...SINGLE_INSTANCE.filter(
        (l) => (l.id === 'floor' || opts.libraries.length === 0 || opts.libraries.includes(l.id)) && !l.id.endsWith(':retry10') && l.id !== HANDOFF_FLOOR_ID,
      ),
      // The saturation scenario's read-write and semaphore rows, only when named.
      ...SATURATION_ROWS.filter((r) => !SINGLE_INSTANCE.some((l) => l.id === r.id) && opts.libraries.includes(r.id)),
    ];
    for (const lib of contenders) {
      const key = `bench-cg-${lib.id}`;
      let locker: Locker | undefined;
      try {
        locker = await lib.open(server.port);
        for (let i = 0; i < opts.warmup; i++) await (await locker.acquire(key))();
        await mark();
        for (let i = 0; i < opts.cycles; i++) await (await locker.acquire(key))();
        const perCycle = ((await mark()) - markerIr) / opts.cycles;
        libraries.push({ id: lib.id, label: lib.label, perCycle });
        log(`  pass ${pass} ${lib.label}: ${Math.round(perCycle).toLocaleString('en-US')} instructions per cycle`);
      } finally {
        await locker?.close().catch(() => undefined);
        await mark().catch(() => undefined);
      }
    }
    const redis = /^redis_version:(.+)$/m.exec(await server.admin.info('server'))?.[1]?.trim() ?? '?';
    return { redis, markerIr, libraries };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const n0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');

function renderMarkdown(report: CallgrindReport): string {
  const [first, second] = report.passes;
  const perCycle = (pass: PassCounts | undefined, id: string) => pass?.libraries.find((l) => l.id === id)?.perCycle ?? Number.NaN;
  const floor = perCycle(first, 'floor');
  const semaphore = perCycle(first, 'redis-semaphore');
  const build = `commit ${report.build.commit}${report.build.uncommitted.length ? ' (with uncommitted changes)' : ''}`;
  return [
    `# holdfast bench: server instructions per uncontended cycle — ${report.date}`,
    '',
    `Redis ${report.redis} under ${report.valgrind} (callgrind), instructions counted while the server reads, runs and answers requests ` +
      `(readQueryFromClient, handleClientsWithPendingWrites); its own timers (cron, expiry) are left out. ` +
      `${report.cycles} acquire + release cycles per library after ${report.warmup} warm-up; two passes, each on a fresh server; ` +
      `${report.seed}; marker cost subtracted (${n0(first!.markerIr)} / ${n0(second?.markerIr ?? Number.NaN)}). holdfast: ${build}. ` +
      `Took ${Math.round(report.durationMs / 1000)} s.`,
    '',
    ...markdownTable(
      ['Library', 'pass 1 / cycle', 'pass 2 / cycle', 'difference', '× floor', '× redis-semaphore'],
      first!.libraries.map(({ id, label, perCycle: a }) => {
        const b = perCycle(second, id);
        return [label, n0(a), n0(b), `${n0(Math.abs(a - b))} (${spreadPct([a, b]).toFixed(3)} %)`, (a / floor).toFixed(2), (a / semaphore).toFixed(2)];
      }),
    ),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opts = parseArgs(args);
  const started = performance.now();
  const log = (line: string) => console.log(line);
  log(`holdfast bench: server instructions per uncontended cycle (callgrind), ${opts.cycles} cycles, two passes`);
  const seedDir = mkdtempSync(path.join(os.tmpdir(), 'holdfast-callgrind-seed-'));
  const passes: PassCounts[] = [];
  let seedNote: string;
  try {
    const seed = fixedSeed(seedDir);
    seedNote = seed.note;
    log(`  ${seed.note}`);
    for (let pass = 1; pass <= 2; pass++) passes.push(await onePass(pass, opts, seed.env, log));
  } finally {
    rmSync(seedDir, { recursive: true, force: true });
  }
  const report: CallgrindReport = {
    date: new Date().toISOString(),
    build: buildInfo(),
    args,
    redis: passes[0]!.redis,
    valgrind: execFileSync(VALGRIND, ['--version'], { encoding: 'utf8' }).trim(),
    cycles: opts.cycles,
    warmup: opts.warmup,
    seed: seedNote,
    passes,
    durationMs: performance.now() - started,
  };
  const markdown = renderMarkdown(report);
  // A run with the default sizes writes results/; any other, results/tmp/.
  const complete = args.filter((a) => a !== '--').length === 0;
  const dir = new URL(complete ? '../results/' : '../results/tmp/', import.meta.url);
  const name = 'callgrind';
  await mkdir(dir, { recursive: true });
  await Promise.all([
    writeFile(new URL(`${name}.json`, dir), `${JSON.stringify(report, null, 2)}\n`),
    writeFile(new URL(`${name}.md`, dir), markdown),
  ]);
  log(`\n${markdown}`);
  log(`Written: ${new URL(`${name}.json`, dir).pathname}, ${name}.md`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
