#!/usr/bin/env node
// Model-checks holdfast.pml with spin: the fixed protocol must pass every
// configuration, each documented variant must produce its counterexample.
// Usage: node test/model/check.mjs [quick|full] [--only <name>]
//   quick (default): the bounds `pnpm test` runs; full (or HOLDFAST_CHAOS=full):
//   every fault budget and three clients.
// Exit code 1 when the fixed model has a counterexample (its trail is printed
// as steps) or a variant has none.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, copyFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const modelPath = join(here, 'holdfast.pml');

/**
 * Bounded configurations. `expect: 'pass'` must hold; 'counterexample' must be
 * found (`shortest`: searched breadth-first, so the trail printed is a shortest one).
 */
export function configs(size = 'quick') {
  const quick = ['-DMSGLOSS=0', '-DCLOSE=0', '-DRENEW=0'];
  const small = ['-DLOSS=0', '-DDELAY=0', '-DMSGLOSS=0', '-DMSGDELAY=0', '-DGIVEUP=0', '-DCLOSE=0', '-DRENEW=0', '-DREENTER=0'];
  const list = [
    { name: 'fixed', expect: 'pass', compact: size === 'full', defines: size === 'full' ? [] : quick },
    { name: 'fixed-3-clients', expect: 'pass', defines: ['-DN=3', ...small] },
    { name: 'fixed-foreign', expect: 'pass', defines: ['-DFOREIGN', ...small, '-DPAUSE=0'] },
    // The pre-fix hand-off: one tick of normal latency on the confirmation is enough.
    { name: 'prefix', expect: 'counterexample', shortest: true, defines: ['-DPREFIX', ...quick] },
    // The fixed hand-off without the S_h >= S_b check: a stale hand-off message starts a second holder.
    { name: 'noguard', expect: 'counterexample', defines: ['-DNOGUARD', '-DN=3', ...small] },
    { name: 'foreign-unguarded', expect: 'counterexample', shortest: true, defines: ['-DFOREIGN', '-DFOREIGN_UNGUARDED', ...small, '-DPAUSE=0'] },
    // A waiter that finds take.lua's string lock queues without turning it into the hash: the release's string path (release-all.lua) would free it with a waiter queued, no hand-off.
    { name: 'noconvert', expect: 'counterexample', shortest: true, defines: ['-DNOCONVERT', ...small, '-DPAUSE=0'] },
  ];
  if (size === 'full') {
    // Three clients with late messages as well exceed 8 GB: lost replies, delays and pauses only.
    list.push({ name: 'fixed-3-clients-faults', expect: 'pass', compact: true, defines: ['-DN=3', '-DMSGLOSS=0', '-DMSGDELAY=0', '-DCLOSE=0', '-DRENEW=0', '-DREENTER=0', '-DGIVEUP=0'] });
  }
  return list;
}

/** Installs spin with apt-get when it is missing; returns false when that is not possible. */
export function ensureSpin() {
  if (spawnSync('spin', ['-V']).status === 0) return true;
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const cmd = asRoot ? ['apt-get', ['install', '-y', 'spin']] : ['sudo', ['-n', 'apt-get', 'install', '-y', 'spin']];
  console.error(`spin not found: ${cmd[0]} ${cmd[1].join(' ')}`);
  const res = spawnSync(cmd[0], cmd[1], { stdio: 'inherit' });
  if (res.status !== 0 || spawnSync('spin', ['-V']).status !== 0) {
    console.error('could not install spin (Debian package `spin`); install it and run again');
    return false;
  }
  return true;
}

/** Runs one configuration: exhaustive safety search (assertions and invalid end states). */
export function runConfig(config) {
  const dir = mkdtempSync(join(tmpdir(), `holdfast-model-${config.name}-`));
  const started = Date.now();
  try {
    copyFileSync(modelPath, join(dir, 'holdfast.pml'));
    execFileSync('spin', [...config.defines, '-a', 'holdfast.pml'], { cwd: dir, stdio: 'pipe' });
    // -O0: pan.c of this model takes a minute to compile at -O2 and runs about as fast.
    // Full runs store states hash-compacted (HC4: a small chance of skipping a state, far less memory).
    const storage = config.compact ? ['-DHC4'] : ['-DCOLLAPSE'];
    execFileSync('gcc', ['-O0', '-DSAFETY', '-DNOFAIR', '-DMEMLIM=8192', ...storage, ...(config.shortest ? ['-DBFS'] : []), '-o', 'pan', 'pan.c'], { cwd: dir, stdio: 'pipe' });
    const pan = spawnSync('./pan', ['-m200000'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 });
    const out = pan.stdout ?? '';
    const errors = Number(/errors: (\d+)/.exec(out)?.[1] ?? NaN);
    // Spin prints large counts in exponent form (1.0e+08 states).
    const states = Number(/([\d.]+(?:e\+\d+)?) states, stored/.exec(out)?.[1] ?? NaN);
    const complete = !/Search not completed/.test(out) || errors > 0;
    let violation = '';
    let steps = [];
    if (errors > 0 && existsSync(join(dir, 'holdfast.pml.trail'))) {
      violation = (/pan:\d+: (.*)/.exec(out)?.[1] ?? '').trim();
      const trail = spawnSync('spin', [...config.defines, '-t', 'holdfast.pml'], {
        cwd: dir, encoding: 'utf8', maxBuffer: 256 << 20,
      }).stdout;
      steps = readableTrail(trail);
    }
    return { name: config.name, expect: config.expect, errors, states, complete, violation, steps,
      seconds: (Date.now() - started) / 1000, output: out };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const KIND = { 1: 'acquire', 2: 'release', 3: 'release-all', 4: 'cancel', 5: 'renew' };
const MODE = { 0: '', 1: "'try'", 2: "'join'", 3: "'reenter'" };
const REPLY = { 0: '-', 1: 'granted', 2: 'busy', 3: 'gone {-1}', 4: 'held by another {-2}', 5: 'key conflict', 6: 'ok' };
const RID = { 1: 'acquire call', 2: 'release', 3: 'post-loss release', 4: 're-entry', 5: 're-entry release' };
const FAULT = { 1: 'reply lost after apply (resent on reconnect)', 2: 'reply one tick late', 3: 'request one tick late', 4: 'pub/sub message lost', 5: 'pub/sub message late' };
const rid = (r) => `${RID[r % 8] ?? 'request'} of client ${Math.floor(r / 8)}`;

/** One readable line per STEP printed by the model. */
function describe(word, a) {
  switch (word) {
    case 'send': return `sends ${KIND[a[0]]} ${MODE[a[1]] ?? ''} (${rid(a[2])})`;
    case 'apply': return `Redis applies ${KIND[a[0]]} ${MODE[a[1]] ?? ''} (${rid(a[2])}) -> ${REPLY[a[3]]}${a[3] === 1 ? ` token ${a[4]}` : a[3] === 2 ? ` retry in ${a[4]}` : ''}`;
    case 'enter': return `ENTERS its section, token ${a[0]}, local deadline tick ${a[1]}${a[2] ? ' (started on the hand-off message)' : ''}`;
    case 'lost': return a[0] ? 'deadline passed: reports LOST (expired)' : 'reports LOST (taken / closed)';
    case 'leave': return 'section over: release';
    case 'sleep': return `sleeps until tick ${a[0]}`;
    case 'wake': return `wakes${a[0] ? ` with a hand-off (S_h ${a[1]})` : ''}`;
    case 'message': return a[0] === 1 ? `reads message h|client ${a[1]}|token ${a[2]}|S_h ${a[3]}` : 'reads message f';
    case 'pause': return `PAUSED until tick ${a[0]}`;
    case 'fault': return `fault: ${FAULT[a[0]]}${a[0] === 5 ? ` (until tick ${a[1]})` : ''}`;
    case 'giveup': return 'gives up waiting (abort / waitMs): cancel';
    case 'close': return 'close()';
    default: return `${word} ${a.join(' ')}`;
  }
}

/**
 * Turns the replayed trail (`spin -t`, the model's printf lines) into one line
 * per step: the tick, the client, what it did; each `apply` is preceded by the
 * script branches (`@script` tags) it took.
 */
export function readableTrail(trail) {
  const source = readFileSync(modelPath, 'utf8').split('\n');
  const steps = [];
  let last = '';
  const push = (line) => {
    if (line !== last) steps.push(line);
    last = line;
  };
  for (const row of trail.split('\n')) {
    const step = /STEP (\d+) (\d+) (\w+)((?: -?\d+)*)/.exec(row);
    if (step) {
      const args = step[4].trim().split(/\s+/).filter(Boolean).map(Number);
      push(`tick ${step[1]}  client ${step[2]}: ${describe(step[3], args)}`);
      continue;
    }
    if (/assertion violated/.test(row)) {
      const line = Number(/holdfast\.pml:(\d+)/.exec(row)?.[1]);
      push(`VIOLATED: ${(source[line - 1] ?? row).trim()}`);
      continue;
    }
    for (const tag of row.matchAll(/@script ([\w.-]+#[\w-]+)/g)) push(`           script branch ${tag[1]}`);
  }
  return steps;
}

function main() {
  const args = process.argv.slice(2);
  const size = args.includes('full') || process.env.HOLDFAST_CHAOS === 'full' ? 'full' : 'quick';
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  if (!ensureSpin()) process.exit(2);
  let failed = false;
  for (const config of configs(size).filter((c) => !only || c.name === only)) {
    const r = runConfig(config);
    const found = r.errors > 0;
    const ok = config.expect === 'pass' ? !found && r.complete : found;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${r.name} (expect ${config.expect}): ${r.states} states, ${r.errors} errors, ${r.seconds.toFixed(1)} s`);
    if (found) {
      console.log(`     ${r.violation}`);
      for (const step of r.steps) console.log(`     ${step}`);
    }
    if (!ok) failed = true;
  }
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
