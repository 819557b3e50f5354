// What an uncontended Redlock cycle costs the client while V8 warms up, holdfast's Redlock against
// redlock@5. First, client CPU per cycle (every thread: compilation included) in each window of
// 250 cycles of a fresh process, every tier on: how long each takes to settle. Then the same
// `cycles` after `warmup` with the interpreter only (--no-opt --no-sparkplug), with the baseline
// compiler (--no-opt), and with every tier: a function runs in the lower tiers until V8 has seen
// it run enough (calls × bytecode; a function called once a cycle needs hundreds of cycles), so
// the first cycles of a process, and a bench round that starts soon after its warm-up, pay those.
//
// Usage: PORTS=7441,7442,7443 node bench/scripts/redlock-tiers.mjs [warmup=100] [cycles=1000] [runs=3] [windows=12]
// (redis-servers at PORTS started beforehand; holdfast from packages/redlock/dist, so build first).
// WINDOW_FLAGS: node flags for the windows' processes, e.g. "--interrupt-budget=16896" (V8's
// default a quarter: functions reach TurboFan four times sooner), to see what tier-up time costs.
// Prints medians over `runs` fresh processes per library, libraries alternating.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openRedlockCycle } from './redlock-cycle.mjs';

const self = fileURLToPath(import.meta.url);
const ports = (process.env.PORTS ?? '').split(',').filter(Boolean).map(Number);
if (ports.length === 0) throw new Error('PORTS: the comma-separated ports of running redis-servers');

async function child(lib, warmup, cycles, windows) {
  const { cycle, close } = await openRedlockCycle(lib, ports, 'tiers');
  // One loop for the warm-up and the measured cycles, so both run the same (optimized) code.
  const loop = async (n) => {
    for (let i = 0; i < n; i++) await cycle();
  };
  const cpuOf = async (n) => {
    const before = process.cpuUsage();
    await loop(n);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / n;
  };
  let out;
  if (windows > 0) {
    out = [];
    for (let w = 0; w < windows; w++) out.push(await cpuOf(WINDOW));
  } else {
    await loop(warmup);
    out = [await cpuOf(cycles)];
  }
  close();
  process.stdout.write(JSON.stringify(out));
}

const WINDOW = 250;

const TIERS = [
  ['interpreter', ['--no-opt', '--no-sparkplug']],
  ['baseline', ['--no-opt']],
  ['all tiers', []],
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Per library, the medians over `runs` processes of what each child printed (a list of figures). */
function measure(flags, runs, args) {
  const samples = { holdfast: [], redlock5: [] };
  for (let r = 0; r < runs; r++) {
    for (const lib of ['holdfast', 'redlock5']) {
      const out = execFileSync(process.execPath, [...flags, self, '--child', lib, ...args.map(String)], { encoding: 'utf8' });
      samples[lib].push(JSON.parse(out));
    }
  }
  const medians = (lists) => lists[0].map((_, i) => median(lists.map((list) => list[i])));
  return { holdfast: medians(samples.holdfast), redlock5: medians(samples.redlock5) };
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6]));
} else {
  const [warmup = 100, cycles = 1000, runs = 3, windows = 12] = process.argv.slice(2).map(Number);
  const row = (label, hf, r5) => `| ${label} | ${hf.toFixed(0)} | ${r5.toFixed(0)} | ${(hf / r5).toFixed(2)} |`;
  const header = (first) => `| ${first} | holdfast Redlock | redlock@5 | × redlock@5 |\n|---|---|---|---|`;
  if (windows > 0) {
    const flags = (process.env.WINDOW_FLAGS ?? '').split(' ').filter(Boolean);
    const under = flags.length > 0 ? `, node ${flags.join(' ')}` : '';
    console.log(`Client CPU µs per uncontended cycle over ${ports.length} instances, by window of ${WINDOW} cycles from the first, every tier${under}, median of ${runs} processes\n`);
    console.log(header('cycles'));
    const { holdfast, redlock5 } = measure(flags, runs, [0, 0, windows]);
    holdfast.forEach((hf, w) => console.log(row(`${w * WINDOW}–${(w + 1) * WINDOW}`, hf, redlock5[w])));
    console.log('');
  }
  console.log(`Client CPU µs per uncontended cycle over ${ports.length} instances, ${warmup} warm-up + ${cycles} cycles, by tier, median of ${runs} processes\n`);
  console.log(header('tiers'));
  for (const [tier, flags] of TIERS) {
    const { holdfast, redlock5 } = measure(flags, runs, [warmup, cycles, 0]);
    console.log(row(tier, holdfast[0], redlock5[0]));
  }
}
