import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { buildInfo, rebuiltDuring } from './build-info.js';
import { noiseRows } from './noise.js';
import { SINGLE_INSTANCE, lostLocks, type LockLibrary } from './libraries.js';
import { HANDOFF_FLOOR_ID } from './handoff-floor.js';
import { NODE_REDIS_FLOOR_ID, NODE_REDIS_HANDOFF_FLOOR_ID, NODE_REDIS_MULTIPROCESS_IDS } from './node-redis-libraries.js';
import { ALL_SCENARIOS, parseOptions, wants, type BenchOptions, type ScenarioName } from './options.js';
import { RedisServer } from './processes.js';
import { holdfastRedlock, multiFloor, NODE_REDLOCKS } from './redlock-libraries.js';
import { RENEWAL_LIBRARIES } from './renewal-holders.js';
import { renderMarkdown } from './report-markdown.js';
import { DRAIN_MS, describeContention, type ContentionResult, type Mode } from './scenario-contention.js';
import { runMultiProcess } from './scenario-multiprocess.js';
import { runRedlockUncontended } from './scenario-redlock.js';
import { runRenewal } from './scenario-renewal.js';
import { runUncontended } from './scenario-uncontended.js';
import { READ_WRITE_WORKERS, runReadWrite } from './scenario-read-write.js';
import { runSemaphore, SEMAPHORE_CONTENDERS, SEMAPHORE_PERMITS } from './scenario-semaphore.js';
import { runSemaphoreMemory } from './semaphore-memory.js';
import { runSaturation, saturationNotes } from './scenario-saturation.js';
import { HOLDER_COUNTS, runHolders } from './scenario-holders.js';
import { HOLDERS_ROWS } from './holders-rows.js';
import { SATURATION_ROWS } from './saturation-rows.js';
import { fmt } from './stats.js';
import { installStrayErrorHandlers, strayErrors } from './stray-errors.js';
import type { BenchReport, Machine, SuiteResult } from './suite.js';

installStrayErrorHandlers();

/** Libraries of the multi-process run: the hand-off floor, holdfast and the competitors closest to each design. */
const MULTIPROCESS_IDS = [HANDOFF_FLOOR_ID, 'holdfast', 'holdfast:spin', 'redis-semaphore', 'redlock5:retry10', 'node-redisson', ...NODE_REDIS_MULTIPROCESS_IDS];
const MODES: readonly Mode[] = ['no-pause', 'pause'];

const log = (line: string) => console.log(line);

function message(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

async function contentionRuns(
  libs: readonly LockLibrary[],
  run: (lib: LockLibrary, mode: Mode) => Promise<ContentionResult>,
  notes: string[],
): Promise<ContentionResult[]> {
  const results: ContentionResult[] = [];
  for (const mode of MODES) {
    for (const lib of libs) {
      try {
        const r = await run(lib, mode);
        results.push(r);
        log(`  ${mode} ${lib.label}: ${describeContention(r)}`);
        if (r.strayInWorkers) notes.push(`${lib.label}, ${mode}, ${r.processes} processes: ${r.strayInWorkers} errors thrown from the library's own timers in the workers.`);
        if (r.drainTimedOut) notes.push(`${lib.label}, ${mode}${r.processes > 1 ? `, ${r.processes} processes` : ''}: workers were still waiting ${DRAIN_MS / 1000} s after the stop, with the lock free.`);
        if (r.capped) notes.push(`${lib.label}, ${mode}${r.processes > 1 ? `, ${r.processes} processes` : ''}: only ${r.sections} of ${r.target} sections within the cap.`);
      } catch (error) {
        notes.push(`${lib.label}, ${mode}: contention run failed: ${message(error)}`);
        log(`  ${mode} ${lib.label}: FAILED ${message(error)}`);
      }
    }
  }
  return results;
}

async function runSuite(options: BenchOptions, index: number): Promise<SuiteResult> {
  const started = performance.now();
  const s = options.sizes;
  const suite: SuiteResult = { notes: [], strayErrors: {}, probes: [], durationMs: 0 };
  const strayBefore = strayErrors();
  const server = await RedisServer.start();
  const enter = (name: ScenarioName) => {
    if (!options.scenarios.includes(name)) return false;
    suite.probes.push({ scenario: name, load1: os.loadavg()[0]! });
    return true;
  };
  /** One scenario, when chosen: its heading, then its body; a failure is a note, and the next scenario runs. */
  const scenario = async (name: ScenarioName, heading: string, body: () => Promise<void>) => {
    if (!enter(name)) return;
    log(`\n[run ${index + 1}] ${heading}`);
    try {
      await body();
    } catch (error) {
      suite.notes.push(`${name} scenario failed: ${message(error)}`);
      log(`  FAILED ${message(error)}`);
    }
  };
  // The hand-off floor runs whenever contention does, as the floor does in scenario 1.
  const single = SINGLE_INSTANCE.filter(
    (l) => l.id === HANDOFF_FLOOR_ID || wants(options, l.id) || (l.id === NODE_REDIS_HANDOFF_FLOOR_ID && wants(options, 'holdfast:node-redis')),
  );
  try {
    if (enter('uncontended')) {
      log(`\n[run ${index + 1}] 1–2. uncontended, ${s.cycles} cycles × ${s.latencyRounds} rounds`);
      const contenders = SINGLE_INSTANCE.filter(
        (l) => (l.id === 'floor' || l.id.startsWith(NODE_REDIS_FLOOR_ID) || wants(options, l.id)) && !l.id.endsWith(':retry10') && l.id !== HANDOFF_FLOOR_ID && l.id !== NODE_REDIS_HANDOFF_FLOOR_ID && l.id !== 'holdfast:spin',
      );
      suite.uncontended = await runUncontended(
        contenders.map((l) => ({ id: l.id, label: l.label, settings: l.settings, open: () => l.open(server.port) })),
        [server.admin],
        { warmup: s.warmupCycles, cycles: s.cycles, rounds: s.latencyRounds, floorId: 'floor', log },
      );
    }
    if (enter('contention')) {
      log(`\n[run ${index + 1}] 3. contention, ${s.workers} workers in one process, ${s.sections} sections`);
      suite.contention = await contentionRuns(
        single.filter((l) => l.contends),
        (lib, mode) => runMultiProcess(lib, server.port, server.admin, s, mode, 1),
        suite.notes,
      );
    }
    if (enter('multiprocess')) {
      log(`\n[run ${index + 1}] 3. contention across ${s.processes} processes`);
      suite.multiprocess = await contentionRuns(
        single.filter((l) => MULTIPROCESS_IDS.includes(l.id)),
        (lib, mode) => runMultiProcess(lib, server.port, server.admin, s, mode, s.processes),
        suite.notes,
      );
    }
    await scenario('redlock', '4. Redlock over 3 and 5 instances', async () => {
      const libs = [holdfastRedlock, ...NODE_REDLOCKS].filter((l) => wants(options, l.id));
      const servers = await RedisServer.startMany(5);
      try {
        suite.redlock = { uncontended: await runRedlockUncontended([multiFloor, ...libs], servers, s, log) };
      } finally {
        await Promise.all(servers.map((x) => x.stop()));
      }
    });
    if (enter('renewal')) {
      log(`\n[run ${index + 1}] 5. ${s.renewalLeases} leases renewed for ${s.renewalHoldMs / 1000} s`);
      suite.renewal = [];
      for (const lib of RENEWAL_LIBRARIES.filter((l) => wants(options, l.id))) {
        try {
          const r = await runRenewal(lib, server, s);
          suite.renewal.push(r);
          log(`  ${lib.label}: ${fmt(r.clientPerSec, 1)} client cmds/s, ${fmt(r.serverPerSec, 0)} server calls/s, CPU ${fmt(r.cpuPct)} %, RSS ${r.rssDeltaMb >= 0 ? '+' : ''}${fmt(r.rssDeltaMb, 1)} MB, ${fmt(r.bytesPerLock, 0)} B/lock, held ${r.heldAtEnd}/${r.leases}`);
        } catch (error) {
          suite.notes.push(`${lib.label}: renewal run failed: ${message(error)}`);
          log(`  ${lib.label}: FAILED ${message(error)}`);
        }
      }
    }
    await scenario('semaphore', `6. semaphore, ${SEMAPHORE_PERMITS} permits: ${s.semaphoreCycles} uncontended cycles, ${s.workers} workers × ${s.semaphoreSections} sections`, async () => {
      const results = await runSemaphore(SEMAPHORE_CONTENDERS.filter((c) => wants(options, c.id)), server, s, log);
      const memory = wants(options, 'holdfast') ? await runSemaphoreMemory(server, s.memoryLeases) : [];
      for (const m of memory) log(`  ${m.what}: ${fmt(m.bytesPerLease, 0)} B per lease`);
      suite.semaphore = { results, memory };
    });
    if (wants(options, 'holdfast')) {
      await scenario('read-write', `7. read-heavy read-write workload, ${READ_WRITE_WORKERS} workers × ${s.readWriteSections} sections, 1 in 10 a write`, async () => {
        suite.readWrite = await runReadWrite(server, s, log);
      });
    }
    await scenario('saturation', '10. server saturation: uncontended cycles per second of Redis CPU, client processes in parallel, a fresh server per row', async () => {
      suite.saturation = await runSaturation(SATURATION_ROWS.filter((r) => r.id === 'floor' || wants(options, r.id)), s, log);
      suite.notes.push(...saturationNotes(suite.saturation));
    });
    await scenario('holders', `11. holders: Redis CPU per cycle on one name with n = ${HOLDER_COUNTS.join(', ')} holders on it, a fresh server per n`, async () => {
      suite.holders = await runHolders(s, log, HOLDERS_ROWS.filter((r) => wants(options, r.id)));
    });
  } finally {
    await server.stop();
  }
  if (lostLocks.count) suite.notes.push(`redis-semaphore reported ${lostLocks.count} lost locks through onLockLost.`);
  // Counts are per process; a repeated run reports only what it added.
  for (const [what, n] of Object.entries(strayErrors())) {
    const added = n - (strayBefore[what] ?? 0);
    if (added > 0) suite.strayErrors[what] = added;
  }
  suite.durationMs = performance.now() - started;
  return suite;
}

async function machine(loadAvgStart: number[]): Promise<Machine> {
  const probe = await RedisServer.start();
  const info = await probe.admin.info('server');
  await probe.stop();
  return {
    node: process.version,
    redis: /^redis_version:(.+)$/m.exec(info)?.[1]?.trim() ?? '?',
    cpu: os.cpus()[0]?.model ?? '?',
    cores: os.availableParallelism(),
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    loadAvgStart,
    loadAvgEnd: os.loadavg(),
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const options = parseOptions(args);
  const started = performance.now();
  const loadAvgStart = os.loadavg();
  const buildAtStart = buildInfo();
  log(`holdfast bench, ${options.quick ? 'quick' : 'full'} mode, ${options.repeat} run(s), scenarios: ${options.scenarios.join(', ')}`);
  const runs: SuiteResult[] = [];
  for (let i = 0; i < options.repeat; i++) runs.push(await runSuite(options, i));
  const date = new Date().toISOString();
  const rebuilt = rebuiltDuring(buildAtStart, buildInfo());
  if (rebuilt.length) {
    runs[0]?.notes.push(`The build of ${rebuilt.map((p) => `@holdfast/${p}`).join(', ')} changed during the run: later scenarios may have measured a newer version.`);
  }
  const report: BenchReport = {
    date,
    build: { ...buildAtStart, rebuiltDuringRun: rebuilt },
    mode: options.quick ? 'quick' : 'full',
    repeat: options.repeat,
    args,
    machine: await machine(loadAvgStart),
    sizes: options.sizes,
    runs,
    noise: noiseRows(runs),
    durationMs: performance.now() - started,
  };
  const markdown = renderMarkdown(report);

  // Quick and partial runs go to the git-ignored tmp/ and never replace the results of a full run.
  const complete = !options.quick && options.libraries.length === 0 && options.scenarios.length === ALL_SCENARIOS.length;
  const dir = new URL(complete ? '../results/' : '../results/tmp/', import.meta.url);
  // Only the latest run is written: the one baseline kept in results/runs/ is copied there by hand.
  await mkdir(dir, { recursive: true });
  await Promise.all([
    writeFile(new URL('latest.json', dir), `${JSON.stringify(report, null, 2)}\n`),
    writeFile(new URL('latest.md', dir), markdown),
  ]);
  log(`\n${markdown}`);
  log(`Written: ${new URL('latest.json', dir).pathname}, latest.md`);
  if (complete) {
    // The election rows (holdfast beside redis-leader) run in a process of their own: redis-leader's
    // timers outlive its stop(), so that script ends by process.exit (src/election.ts).
    log('\n9. leader election, holdfast and redis-leader (src/election.ts, results/election.md)');
    const election = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./election.ts', import.meta.url))], { stdio: 'inherit' });
    if (election.status !== 0) log(`  FAILED: the election bench exited with ${election.status ?? election.signal}`);
  }
}

main().then(
  // Libraries leave timers running (node-redisson's wait timeouts); everything measured is written.
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
