// `pnpm test`: build, type-check the tests (against ioredis 5 and 6; node-redis 5 and 6 in the type
// tests), run vitest five times (ioredis 5: every file; then ioredis 6: HOLDFAST_IOREDIS=6,
// node-redis 5: HOLDFAST_CLIENT=node-redis, node-redis 6: HOLDFAST_NODE_REDIS=6, Valkey GLIDE:
// HOLDFAST_CLIENT=glide, each running the port contract suite, test/port/, and the client-dependent
// end-to-end files, named *.client.test.ts, the GLIDE pass also the ports of Redisson's and the peers'
// tests, packages/core/test/ports/; *.ioredis.test.ts run in the ioredis passes only,
// *.node-redis.test.ts in the node-redis ones, *.glide.test.ts in the GLIDE one),
// check the packages (publint and attw, README links, TypeDoc), print each step's wall time and the
// ten slowest test files, and always end with the one closing line CI reads ("tests: N passed,
// N failed, N skipped"), which counts the tests of every vitest pass.
//
// The steps run in order and a failing step does not stop the ones after it (a vitest failure
// must not hide a broken package export), except the build: nothing else can run without it.
// The exit code is the first failing step's, so anything failing still fails the command.
//
// Arguments are passed to vitest (`pnpm test -- packages/core/test/mutex/wait.test.ts -t hand-off`).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { combine, failedTests, slowestFiles, summarize, unhandledErrors } from './test-summary.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// `pnpm test -- a b` hands the script `-- a b` on some pnpm versions and `a b` on others.
const filters = process.argv.slice(2);
if (filters[0] === '--') filters.shift();
// `pnpm test:quick` (`--quick`): the inner loop of a change. Build, the type check, and one vitest
// pass (ioredis 5) of the behaviour suites without the slow chaos and matrix files (HOLDFAST_QUICK,
// the `*.slow.test.ts` files and the folders in SLOW of vitest.config.ts); no per-client passes, no
// package checks.
const quick = filters[0] === '--quick';
if (quick) filters.shift();
if (filters[0] === '--') filters.shift();

// Run as `node scripts/test.mjs` too, not only through pnpm, which puts these on the PATH.
const env = { ...process.env, PATH: [join(root, 'node_modules', '.bin'), process.env.PATH].join(delimiter) };

/** Runs one step with its output on this terminal; returns its exit code (1 when killed). */
function run(label, command, args, extraEnv = {}) {
  const shown = Object.entries(extraEnv).map(([name, value]) => `${name}=${value} `).join('');
  console.log(`\n> ${label}: ${shown}${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, {
    cwd: root,
    env: { ...env, ...extraEnv },
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.error) {
    console.error(`${label}: could not start ${command}: ${result.error.message}`);
    return 1;
  }
  if (result.status === null) {
    console.error(`${label}: ${command} was killed by ${result.signal}`);
    return 1;
  }
  return result.status;
}

const failures = [];
/** Wall time of every step, printed at the end. */
const stepTimes = [];
function step(label, command, args, extraEnv) {
  const started = performance.now();
  const code = run(label, command, args, extraEnv);
  stepTimes.push({ label, seconds: (performance.now() - started) / 1000 });
  if (code !== 0) failures.push({ label, code });
  return code;
}

const testStarted = performance.now();
if (step('build', 'turbo', ['run', 'build']) !== 0) {
  console.log('tests: not run, the build failed');
  process.exit(failures[0].code);
}

step('tsc', 'tsc', ['-p', 'tsconfig.vitest.json']);
// No import circle between files (packages, bench, test harness) or packages (scripts/check-circles.mjs).
step('circles', 'node', ['scripts/check-circles.mjs']);
// The same sources and tests against ioredis 6's types (`ioredis` mapped to the ioredis6 alias).
if (!quick) step('tsc (ioredis 6)', 'tsc', ['-p', 'tsconfig.vitest-ioredis6.json']);

// The first pass runs every file on ioredis 5. The others run what a client can change: the port
// contract suite and the client-dependent end-to-end files (test/port/, *.client.test.ts), on
// ioredis 6, on node-redis 5 and 6 (HOLDFAST_CLIENT=node-redis, see test/src/node-redis-twin.ts) and on
// Valkey GLIDE (HOLDFAST_CLIENT=glide, see test/src/glide-twin.ts).
// With filters a pass may match no file at all, which is fine as long as the passes together ran
// something.
const passes = [
  { label: 'vitest (ioredis 5)', major: '5', report: '.vitest-report.json', env: { HOLDFAST_IOREDIS: '5' } },
  { label: 'vitest (ioredis 6)', major: '6', report: '.vitest-report-ioredis6.json', env: { HOLDFAST_IOREDIS: '6' } },
  {
    label: 'vitest (node-redis 5)',
    major: 'node-redis',
    report: '.vitest-report-node-redis.json',
    env: { HOLDFAST_CLIENT: 'node-redis', HOLDFAST_NODE_REDIS: '5' },
  },
  {
    label: 'vitest (node-redis 6)',
    major: 'node-redis6',
    report: '.vitest-report-node-redis6.json',
    env: { HOLDFAST_CLIENT: 'node-redis', HOLDFAST_NODE_REDIS: '6' },
  },
  { label: 'vitest (glide)', major: 'glide', report: '.vitest-report-glide.json', env: { HOLDFAST_CLIENT: 'glide' } },
];
if (quick) {
  passes.splice(1);
  passes[0].env = { ...passes[0].env, HOLDFAST_QUICK: '1' };
}
/** The file of a pass's unhandled errors (scripts/unhandled-errors-reporter.mjs), beside its report. */
const unhandledFile = (report) => report.replace(/\.json$/, '-unhandled.json');
const summaries = [];
for (const pass of passes) {
  const report = join(root, pass.report);
  // A report left by an earlier run must not be read as this run's.
  rmSync(report, { force: true });
  rmSync(unhandledFile(report), { force: true });
  const mayMatchNothing = pass.major !== '5' && filters.length > 0;
  const code = step(pass.label, 'vitest', ['run', ...(mayMatchNothing ? ['--passWithNoTests'] : []), ...filters], pass.env);
  if (existsSync(report)) summaries.push({ pass: pass.label, ...summarize(report) });
  else if (code !== 0 || !mayMatchNothing) summaries.push({ pass: pass.label, missing: true });
}
const total = combine(summaries);
for (const summary of summaries) console.log(`${summary.pass}: ${summary.line}`);
// vitest exits 0 when, say, a filter matched only skipped tests: nothing ran is not a pass.
if (!total.ok && !failures.some((f) => f.label.startsWith('vitest'))) failures.push({ label: 'vitest', code: 1 });

if (!quick) {
  step('lint:package', 'turbo', ['run', 'lint:package']);
  // Relative links in package READMEs must resolve inside the published tarballs.
  step('links', 'node', ['scripts/check-readme-links.mjs']);
  // The API docs build clean (typedoc.json: warnings are errors); `--emit none` checks without
  // writing docs/api (`pnpm docs:api` writes it).
  step('typedoc', 'typedoc', ['--emit', 'none']);
}

console.log('\nwall time per step:');
for (const { label, seconds } of stepTimes) console.log(`  ${label.padEnd(24)} ${seconds.toFixed(1).padStart(7)} s`);
console.log(`  ${'total'.padEnd(24)} ${((performance.now() - testStarted) / 1000).toFixed(1).padStart(7)} s`);
console.log('ten slowest test files:');
for (const { pass, name, ms } of slowestFiles(passes.map((p) => ({ pass: p.label, file: join(root, p.report) })))) {
  console.log(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(root, name)}  (${pass})`);
}
const failedRows = failedTests(passes.map((p) => ({ pass: p.label, file: join(root, p.report) })));
if (failedRows.length > 0) console.log('failed tests:');
for (const { pass, name, test, message } of failedRows) {
  console.log(`  ${relative(root, name)} > ${test}  (${pass})\n      ${message}`);
}
// Errors no test owned (vitest exits 1 for them while every test passed): named here, at the end.
const unhandledRows = unhandledErrors(passes.map((p) => ({ pass: p.label, file: unhandledFile(join(root, p.report)) })));
if (unhandledRows.length > 0) console.log('unhandled errors (vitest fails the pass for them):');
for (const { pass, text } of unhandledRows) console.log(`  (${pass})\n${text.replace(/^/gm, '      ')}`);
if (failures.length > 0) console.log(`failed: ${failures.map((f) => `${f.label} (exit ${f.code})`).join(', ')}`);
console.log(total.line);
process.exit(failures.length > 0 ? failures[0].code : 0);
