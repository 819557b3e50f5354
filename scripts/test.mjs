// `pnpm test`: build, type-check the tests, run vitest, check the packages (publint and attw,
// README links, TypeDoc), and always end with the one closing line CI reads
// ("tests: N passed, N failed, N skipped").
//
// The steps run in order and a failing step does not stop the ones after it (a vitest failure
// must not hide a broken package export), except the build: nothing else can run without it.
// The exit code is the first failing step's, so anything failing still fails the command.
//
// Arguments are passed to vitest (`pnpm test -- packages/core/test/wait.test.ts -t hand-off`).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize } from './test-summary.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const report = join(root, '.vitest-report.json');
// `pnpm test -- a b` hands the script `-- a b` on some pnpm versions and `a b` on others.
const filters = process.argv.slice(2);
if (filters[0] === '--') filters.shift();

// Run as `node scripts/test.mjs` too, not only through pnpm, which puts these on the PATH.
const env = { ...process.env, PATH: [join(root, 'node_modules', '.bin'), process.env.PATH].join(delimiter) };

/** Runs one step with its output on this terminal; returns its exit code (1 when killed). */
function run(label, command, args) {
  console.log(`\n> ${label}: ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit', shell: process.platform === 'win32' });
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
function step(label, command, args) {
  const code = run(label, command, args);
  if (code !== 0) failures.push({ label, code });
  return code;
}

if (step('build', 'turbo', ['run', 'build']) !== 0) {
  console.log('tests: not run, the build failed');
  process.exit(failures[0].code);
}

step('tsc', 'tsc', ['-p', 'tsconfig.vitest.json']);

// A report left by an earlier run must not be read as this run's.
rmSync(report, { force: true });
const vitestCode = step('vitest', 'vitest', ['run', ...filters]);
let closing;
if (!existsSync(report)) {
  closing = 'tests: no report, vitest did not finish';
  if (vitestCode === 0) failures.push({ label: 'vitest', code: 1 });
} else {
  const summary = summarize(report);
  closing = summary.line;
  // vitest exits 0 when, say, a filter matched only skipped tests: nothing ran is not a pass.
  if (!summary.ok && vitestCode === 0) failures.push({ label: 'vitest', code: 1 });
}

step('lint:package', 'turbo', ['run', 'lint:package']);
// Relative links in package READMEs must resolve inside the published tarballs.
step('links', 'node', ['scripts/check-readme-links.mjs']);
// The API docs build clean (typedoc.json: warnings are errors); `--emit none` checks without
// writing docs/api (`pnpm docs:api` writes it).
step('typedoc', 'typedoc', ['--emit', 'none']);

if (failures.length > 0) console.log(`failed: ${failures.map((f) => `${f.label} (exit ${f.code})`).join(', ')}`);
console.log(closing);
process.exit(failures.length > 0 ? failures[0].code : 0);
