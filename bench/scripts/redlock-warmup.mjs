// What an uncontended Redlock cycle costs the client before V8 has optimized it, counted
// (callgrind: instructions, which do not move with the machine's load), holdfast's Redlock against
// redlock@5 and against "commands": holdfast's own commands with as little JavaScript as can
// send them (take.lua and release-taken.lua on every instance, each decided at a majority).
//
// 1. By tier: instructions per cycle with the interpreter only (--no-opt --no-sparkplug) and with
//    the baseline compiler (--no-opt), each the difference of a run of 2 × `cycles` measured cycles
//    and one of `cycles` (the same start-up, connections and warm-up; a difference from a run with
//    none moved by up to 0.4 G instructions from run to run, with module loading in it).
// 2. A process's first `coldCycles` cycles, every tier on, compilation on the main thread
//    (--single-threaded, so it is counted): instructions per cycle by where they went (TurboFan's
//    compiler, garbage collection, V8's builtins, the rest; told apart by function name).
// 3. The optimized code that leaves behind: bytes of machine code TurboFan made for each library's
//    own functions, and how many functions (from --perf-basic-prof's map of a run of `coldCycles`).
//
// Usage: PORTS=7441,7442,7443 node bench/scripts/redlock-warmup.mjs [cycles=1000] [coldCycles=1500]
// (redis-servers at PORTS started beforehand; valgrind and callgrind_annotate on PATH; the packages
// built). About 8 minutes over 3 instances on 2 cores, 11 over 5.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { countNodeInstructions } from '../src/callgrind-node.mjs';

const run = promisify(execFile);
const child = fileURLToPath(new URL('../src/client-callgrind-child.mjs', import.meta.url));
const ports = process.env.PORTS ?? '';
if (!ports) throw new Error('PORTS: the comma-separated ports of running redis-servers');
const [cycles = 1000, coldCycles = 1500] = process.argv.slice(2).map(Number);
const LIBS = ['redlock:holdfast', 'redlock:commands', 'redlock:redlock5'];
const dir = await mkdtemp(join(tmpdir(), 'redlock-warmup-'));
// The dumps go whether the script ends or fails.
process.once('exit', () => rmSync(dir, { recursive: true, force: true }));

/** Instructions callgrind counted for one run of the child; its dump kept at `out` when given. */
function count(lib, flags, warmup, n, out = '/dev/null') {
  return countNodeInstructions(child, [lib, ports, String(warmup), String(n)], out, flags);
}

/** Runs the jobs two at a time (one per core). */
async function inPairs(jobs) {
  const results = [];
  for (let i = 0; i < jobs.length; i += 2) results.push(...(await Promise.all(jobs.slice(i, i + 2).map((job) => job()))));
  return results;
}

const ratio = (a, b) => (a / b).toFixed(2);
const n0 = (x) => Math.round(x).toLocaleString('en-US');

// 1. By tier.
const TIERS = [
  ['interpreter', ['--single-threaded', '--no-opt', '--no-sparkplug'], 50],
  ['baseline compiler', ['--single-threaded', '--no-opt'], 300],
];
console.log(`Client instructions per uncontended cycle over ${ports.split(',').length} instances, by tier (${2 * cycles} cycles minus ${cycles})\n`);
console.log(`| tier | ${LIBS.map((l) => l.replace('redlock:', '')).join(' | ')} | holdfast × redlock@5 | commands × redlock@5 |`);
console.log(`|---|${LIBS.map(() => '--:').join('|')}|--:|--:|`);
for (const [tier, flags, warmup] of TIERS) {
  const jobs = LIBS.flatMap((lib) => [() => count(lib, flags, warmup, 2 * cycles), () => count(lib, flags, warmup, cycles)]);
  const counts = await inPairs(jobs);
  const per = LIBS.map((_, i) => (counts[2 * i] - counts[2 * i + 1]) / cycles);
  console.log(`| ${tier} | ${per.map(n0).join(' | ')} | ${ratio(per[0], per[2])} | ${ratio(per[1], per[2])} |`);
}

// 2. The first cycles, every tier, by where the instructions went.
const CATEGORIES = [
  ['TurboFan', /v8::internal::compiler::|turboshaft|Turbofan|OptimizedCompilationJob|PipelineImpl/],
  ['garbage collection', /Heap|Scavenge|Mark|Sweep|Evacuat|GCTracer|Marking/],
  ['V8 builtins', /^\?\?\?:Builtins_/],
];
/** Self instructions by category, from callgrind_annotate's per-function table. */
async function byCategory(file) {
  const { stdout } = await run('callgrind_annotate', ['--threshold=100', file], { maxBuffer: 64 * 1024 * 1024 });
  const sums = new Map([...CATEGORIES.map(([name]) => [name, 0]), ['the rest', 0]]);
  for (const line of stdout.split('\n')) {
    const m = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*:.*)$/.exec(line);
    if (!m) continue;
    const name = CATEGORIES.find(([, pattern]) => pattern.test(m[2]))?.[0] ?? 'the rest';
    sums.set(name, sums.get(name) + Number(m[1].replaceAll(',', '')));
  }
  return sums;
}
const COLD = ['redlock:holdfast', 'redlock:redlock5'];
const cold = ['--single-threaded'];
await inPairs(COLD.flatMap((lib) => [0, coldCycles].map((n) => () => count(lib, cold, 0, n, join(dir, `${lib.replace(':', '-')}-${n}.out`)))));
const coldRows = [];
for (const lib of COLD) {
  const [none, all] = await Promise.all([0, coldCycles].map((n) => byCategory(join(dir, `${lib.replace(':', '-')}-${n}.out`))));
  coldRows.push(new Map([...all].map(([k, v]) => [k, (v - none.get(k)) / coldCycles])));
}
console.log(`\nClient instructions per cycle over a process's first ${coldCycles} cycles, every tier (--single-threaded: compilation counted), by where they went\n`);
console.log('| | holdfast | redlock@5 | difference |\n|---|--:|--:|--:|');
for (const name of [...coldRows[0].keys()]) {
  const [a, b] = coldRows.map((row) => row.get(name));
  console.log(`| ${name} | ${n0(a)} | ${n0(b)} | ${n0(a - b)} |`);
}
const totals = coldRows.map((row) => [...row.values()].reduce((s, v) => s + v, 0));
console.log(`| all | ${n0(totals[0])} | ${n0(totals[1])} | ${n0(totals[0] - totals[1])} (${ratio(totals[0], totals[1])}×) |`);

// 3. Optimized code of each library's own functions.
const OWN = { 'redlock:holdfast': /\/packages\/(redlock|core)\/dist\//, 'redlock:redlock5': /\/redlock@5[^/]*\// };
console.log(`\nTurboFan code for each library's own functions after ${coldCycles} cycles (--perf-basic-prof map)\n`);
console.log('| | functions | bytes | largest |\n|---|--:|--:|---|');
for (const lib of COLD) {
  const proc = execFile(process.execPath, ['--perf-basic-prof', child, lib, ports, '0', String(coldCycles)]);
  const map = `/tmp/perf-${proc.pid}.map`;
  await new Promise((resolve, reject) => proc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${lib} exited ${code}`)))));
  const entries = (await readFile(map, 'utf8'))
    .split('\n')
    .map((line) => /^[0-9a-f]+ ([0-9a-f]+) JS:\*(.*) (\S+)$/.exec(line))
    .filter((m) => m && OWN[lib].test(m[3]))
    .map((m) => ({ bytes: parseInt(m[1], 16), name: m[2] || '(anonymous)' }));
  await rm(map, { force: true });
  const bytes = entries.reduce((s, e) => s + e.bytes, 0);
  const largest = entries.sort((a, b) => b.bytes - a.bytes).slice(0, 4).map((e) => `${e.name} ${e.bytes}`).join(', ');
  console.log(`| ${lib.replace('redlock:', '')} | ${entries.length} | ${n0(bytes)} | ${largest} |`);
}
