// The one closing line CI reads ("tests: N passed, N failed, N skipped") from the JSON report
// vitest wrote. scripts/test.mjs imports summarize(); run alone (`node scripts/test-summary.mjs
// [report]`) it prints the line and exits non-zero when anything failed or nothing ran.
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
  return { line: `tests: ${passed} passed, ${failed} failed, ${skipped} skipped`, ok: failed === 0 && passed > 0 };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const summary = summarize(process.argv[2]);
  console.log(summary.line);
  process.exit(summary.ok ? 0 : 1);
}
