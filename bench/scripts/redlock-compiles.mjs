// What TurboFan compiles, and when, in a process that runs uncontended Redlock cycles: holdfast's
// Redlock against redlock@5, over the spans the bench's Redlock scenario measures (its warm-up,
// cycles 0–300 of a library, then its two rounds, 300–1,300 and 1,300–2,300). A function is
// compiled once it has run about 3 + its bytecode length / 150 interrupt budgets of 66 KB of
// bytecode (Node 20's V8 defaults), so a function run once a cycle is compiled after 450 cycles
// at the least, however small it is: all the code a cycle runs once compiles after the bench's
// warm-up, in its first round.
//
// Compilation runs on the main thread (--no-concurrent-recompilation), so a job's time is its own
// and not shared with the servers on a 2-core machine; the trace is unbuffered (stdbuf) and goes
// to a file with the span marks, so each job lands in the span it ran in. Jobs are counted
// exactly; their milliseconds move with the machine. Prints medians over `runs` fresh processes
// per library, libraries alternating; then, from one more process each with --print-opt-source
// (which names each job's script, and slows the jobs, so its milliseconds are not used), how many
// jobs were the library's own functions and which functions the first round compiled.
//
// Usage: PORTS=7441,7442,7443 node bench/scripts/redlock-compiles.mjs [runs=3]
// (redis-servers at PORTS started beforehand; holdfast from packages/redlock/dist, so build first).
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRedlockCycle } from './redlock-cycle.mjs';

const self = fileURLToPath(import.meta.url);
const ports = (process.env.PORTS ?? '').split(',').filter(Boolean).map(Number);
if (ports.length === 0) throw new Error('PORTS: the comma-separated ports of running redis-servers');

/** The bench's spans: [label, first cycle, end]. */
const SPANS = [
  ['warm-up (0–300)', 0, 300],
  ['round 1 (300–1,300)', 300, 1300],
  ['round 2 (1,300–2,300)', 1300, 2300],
];
const MARK = '@@span ';

async function child(lib) {
  const { cycle, close } = await openRedlockCycle(lib, ports, 'compiles');
  for (let s = 0; s < SPANS.length; s++) {
    process.stdout.write(`${MARK}${s}\n`);
    for (let i = SPANS[s][1]; i < SPANS[s][2]; i++) await cycle();
  }
  process.stdout.write(`${MARK}${SPANS.length}\n`);
  close();
}

/** The library's own code: holdfast's packages, or redlock@5's. */
const OWN = { holdfast: '/packages/', redlock5: '/redlock@' };

/**
 * Per span: the compile jobs that completed in it, as [function name, ms, script]. With `source`,
 * V8 prints each job's function source first (`--- FUNCTION SOURCE (script:name) id{n,-1}`), which
 * gives its script; otherwise the script is ''.
 */
function compiles(lib, source) {
  const flags = ['--no-concurrent-recompilation', '--trace-opt-verbose', ...(source ? ['--print-opt-source'] : [])];
  // Into a file: through a pipe, lines of V8's trace went missing once the output grew (Node
  // makes its stdout pipe non-blocking, and V8's unbuffered writes are not retried).
  const file = join(tmpdir(), `redlock-compiles-${process.pid}-${lib}.txt`);
  const fd = openSync(file, 'w');
  let out;
  try {
    execFileSync('stdbuf', ['-o0', process.execPath, ...flags, self, '--child', lib], { stdio: ['ignore', fd, 'inherit'] });
    out = readFileSync(file, 'utf8');
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  const spans = SPANS.map(() => []);
  let span = -1;
  let script = '';
  for (const line of out.split('\n')) {
    if (line.startsWith(MARK)) span = Number(line.slice(MARK.length));
    // The job's own function is printed with inlining id -1, the functions it inlines after it.
    const top = /^--- FUNCTION SOURCE \((.*):[^:]*\) id\{\d+,-1\}/.exec(line);
    if (top) script = top[1];
    // An anonymous function prints as `<JSFunction (sfi = …)>`.
    const job = /^\[completed compiling .*?<JSFunction ([^ >]*).*took ([\d.]+), ([\d.]+), ([\d.]+) ms/.exec(line);
    if (!job || span < 0 || span >= SPANS.length) continue;
    const name = job[1].startsWith('(') ? '(anonymous)' : job[1];
    spans[span].push([name, Number(job[2]) + Number(job[3]) + Number(job[4]), script]);
  }
  return spans;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]);
} else {
  const runs = Number(process.argv[2] ?? 3);
  const LIBS = ['holdfast', 'redlock5'];
  const samples = { holdfast: [], redlock5: [] };
  for (let r = 0; r < runs; r++) for (const lib of LIBS) samples[lib].push(compiles(lib, false));
  const named = { holdfast: compiles('holdfast', true), redlock5: compiles('redlock5', true) };
  const own = (lib, jobs) => jobs.filter(([, , script]) => script.includes(OWN[lib]));
  const sum = (jobs) => jobs.reduce((t, [, ms]) => t + ms, 0);
  console.log(`TurboFan jobs (of them the library's own) and their ms on the main thread, per span of uncontended cycles over ${ports.length} instances; jobs and ms median of ${runs} processes, own jobs from one more\n`);
  console.log('| span | holdfast Redlock jobs | own | ms | redlock@5 jobs | own | ms |');
  console.log('|---|--:|--:|--:|--:|--:|--:|');
  SPANS.forEach(([label], s) => {
    const cell = (lib) =>
      `${median(samples[lib].map((p) => p[s].length))} | ${own(lib, named[lib][s]).length} | ${median(samples[lib].map((p) => sum(p[s]))).toFixed(1)}`;
    console.log(`| ${label} | ${cell('holdfast')} | ${cell('redlock5')} |`);
  });
  for (const lib of LIBS) {
    const names = own(lib, named[lib][1]).map(([name]) => name);
    console.log(`\n${lib}, its own functions compiled in round 1: ${names.join(', ')}`);
  }
}
