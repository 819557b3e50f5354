// The one closing line CI reads ("tests: N passed, N failed, N skipped") from the JSON reports
// vitest wrote (one per pass: ioredis 5 and 6, node-redis 5 and 6). scripts/test.mjs imports summarize() and combine(); run
// alone (`node scripts/test-summary.mjs [report...]`) it prints the line over every report given
// and exits non-zero when anything failed or nothing ran.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Reads a vitest JSON report. `ok` is false when a test or a whole file failed, or when no test
 * passed (a filter that matched nothing must not read as a green run).
 */
export function summarize(file = '.vitest-report.json') {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const passed = report.numPassedTests ?? 0;
  // A file that failed without a failing test (it did not load, a hook threw) counts once; a
  // file whose tests failed is already counted by its tests.
  const brokenFiles = (report.testResults ?? []).filter(
    (file) => file.status === 'failed' && !(file.assertionResults ?? []).some((test) => test.status === 'failed'),
  ).length;
  const failed = (report.numFailedTests ?? 0) + brokenFiles;
  const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  return { passed, failed, skipped, line: line(passed, failed, skipped), ok: failed === 0 && passed > 0 };
}

/**
 * The `count` slowest test files over several reports (`{ pass, file }` each), slowest first: each
 * file's time from its first test's start to its last test's end, as vitest reports them.
 */
export function slowestFiles(reports, count = 10) {
  const rows = [];
  for (const { pass, report } of readReports(reports)) {
    for (const result of report.testResults ?? []) {
      const ms = (result.endTime ?? 0) - (result.startTime ?? 0);
      if (Number.isFinite(ms)) rows.push({ pass, name: result.name, ms });
    }
  }
  return rows.sort((a, b) => b.ms - a.ms).slice(0, count);
}

/**
 * The failed tests of several reports (`{ pass, file }` each): the pass, the file, the test's full
 * name and the first line of its first failure message, so that the end of a long log (all a CI
 * summary may keep) names what failed. A file that failed without a failing test (it did not load,
 * a hook threw) is listed with its own message.
 */
export function failedTests(reports, count = 20) {
  const rows = [];
  for (const { pass, report } of readReports(reports)) {
    for (const result of report.testResults ?? []) {
      const failed = (result.assertionResults ?? []).filter((test) => test.status === 'failed');
      for (const test of failed) {
        rows.push({ pass, name: result.name, test: test.fullName ?? test.title, message: firstLine(test.failureMessages?.[0]) });
      }
      if (result.status === 'failed' && failed.length === 0) {
        rows.push({ pass, name: result.name, test: '(the file)', message: firstLine(result.message) });
      }
    }
  }
  return rows.slice(0, count);
}

/**
 * The unhandled errors of several passes (`{ pass, file }` each, files written by
 * scripts/unhandled-errors-reporter.mjs): the pass and a few lines of each error, control
 * characters escaped (an error's message may quote what a server sent).
 */
export function unhandledErrors(reports, count = 10) {
  const rows = [];
  for (const { pass, report } of readReports(reports)) {
    for (const error of Array.isArray(report) ? report : []) {
      const files = error.files?.length > 0 ? `\nfrom ${error.files.join(', ')}` : '';
      rows.push({ pass, text: printable(`${error.stack || `${error.name}: ${error.message}`}${files}`) });
    }
  }
  return rows.slice(0, count);
}

/** Text with ANSI colours dropped and every other control character but newline escaped. */
function printable(text) {
  return String(text)
    .replace(/\u001b\[[0-9;]*m/g, '')
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The reports that exist and parse, with their pass (a pass that wrote none is left out). */
function* readReports(reports) {
  for (const { pass, file } of reports) {
    let report;
    try {
      report = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    yield { pass, report };
  }
}

function firstLine(text) {
  return String(text ?? '').replace(/\u001b\[[0-9;]*m/g, '').split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 300) ?? '';
}

function line(passed, failed, skipped) {
  return `tests: ${passed} passed, ${failed} failed, ${skipped} skipped`;
}

/**
 * The closing line over several passes. A pass given as `{ pass, missing: true }` wrote no
 * report (vitest crashed or was killed): it counts as one failure and is named on the line.
 */
export function combine(summaries) {
  const sum = (field) => summaries.reduce((n, s) => n + (s[field] ?? 0), 0);
  const missing = summaries.filter((s) => s.missing).map((s) => s.pass);
  const passed = sum('passed');
  const failed = sum('failed') + missing.length;
  const note = missing.length > 0 ? ` (no report from ${missing.join(', ')}: it did not finish)` : '';
  return { passed, failed, skipped: sum('skipped'), line: line(passed, failed, sum('skipped')) + note, ok: failed === 0 && passed > 0 };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const reports = process.argv.slice(2);
  const summary = combine((reports.length > 0 ? reports : [undefined]).map((file) => summarize(file)));
  console.log(summary.line);
  process.exit(summary.ok ? 0 : 1);
}
