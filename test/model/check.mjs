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

/** Bounded configurations. `expect: 'pass'` must hold; 'counterexample' must be found. */
export function configs(size = 'quick') {
  const quick = ['-DMSGLOSS=0', '-DCLOSE=0', '-DRENEW=0'];
  const small = ['-DLOSS=0', '-DDELAY=0', '-DMSGLOSS=0', '-DMSGDELAY=0', '-DGIVEUP=0', '-DCLOSE=0', '-DRENEW=0', '-DREENTER=0'];
  const list = [
    { name: 'fixed', expect: 'pass', defines: size === 'full' ? [] : quick },
    { name: 'fixed-foreign', expect: 'pass', defines: ['-DFOREIGN', ...small, '-DPAUSE=0'] },
    // The pre-fix hand-off: one tick of normal latency on the confirmation is enough.
    { name: 'prefix', expect: 'counterexample', defines: ['-DPREFIX', ...quick] },
    { name: 'foreign-unguarded', expect: 'counterexample', defines: ['-DFOREIGN', '-DFOREIGN_UNGUARDED', ...small, '-DPAUSE=0'] },
  ];
  if (size === 'full') {
    list.push({ name: 'fixed-3-clients', expect: 'pass', defines: ['-DN=3', ...small] });
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
    execFileSync('gcc', ['-O0', '-DSAFETY', '-DNOFAIR', '-DCOLLAPSE', '-o', 'pan', 'pan.c'], { cwd: dir, stdio: 'pipe' });
    const pan = spawnSync('./pan', ['-m200000'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 });
    const out = pan.stdout ?? '';
    const errors = Number(/errors: (\d+)/.exec(out)?.[1] ?? NaN);
    const states = Number(/(\d+) states, stored/.exec(out)?.[1] ?? NaN);
    const complete = !/Search not completed/.test(out) || errors > 0;
    let violation = '';
    let steps = [];
    if (errors > 0 && existsSync(join(dir, 'holdfast.pml.trail'))) {
      violation = (/pan:\d+: (.*)/.exec(out)?.[1] ?? '').trim();
      const trail = spawnSync('spin', [...config.defines, '-t', '-p', '-g', 'holdfast.pml'], {
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

/**
 * Turns `spin -t -p -g` output into one line per modelled step: the tick, the
 * client, and the `@script` / `@client` tag nearest to the statement in the model.
 */
export function readableTrail(trail) {
  const source = readFileSync(modelPath, 'utf8').split('\n');
  // Only the tag on the statement's own line: neighbouring lines belong to other branches.
  const tagAt = (line) => /@(script|client) ([\w.-]+#[\w-]+)/.exec(source[line - 1] ?? '')?.[2];
  const steps = [];
  let tick = 0;
  let last = '';
  for (const row of trail.split('\n')) {
    const t = /^\s+now = (\d+)/.exec(row);
    if (t) { tick = Number(t[1]); continue; }
    const m = /proc\s+(\d+) \((\w+):\d+\) holdfast\.pml:(\d+) .*\[(.*)\]/.exec(row);
    if (!m) continue;
    const [, pid, name, lineText, stmt] = m;
    const proc = name === 'Client' ? `client ${pid}` : name;
    const line = Number(lineText);
    const tag = tagAt(line);
    const fault = /b(Loss|Delay|MsgLoss|MsgDelay|Pause|GiveUp|Close)\s*=\s*\(b\w+-1\)/.exec(stmt);
    let text;
    if (fault) text = `fault: ${fault[1]}`;
    else if (/assert/.test(stmt) && false) text = stmt;
    else if (tag) text = tag;
    else continue;
    const entry = `tick ${tick}  ${proc}: ${text}`;
    if (entry !== last) steps.push(entry);
    last = entry;
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
