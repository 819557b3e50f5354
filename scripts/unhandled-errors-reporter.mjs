// A vitest reporter that writes the run's unhandled errors (a rejection no test awaited, an error
// thrown from a timer, a worker process that died or would not stop) to a JSON file beside the
// pass's JSON report, so that scripts/test.mjs can name them in the last lines of the log: vitest
// prints them high up in a long log and exits 1 while every test passed, and the end of a log is
// all a CI summary may keep.
import { writeFileSync } from 'node:fs';

/** `outputFile`: where to write `[{ name, message, stack, files }]` (an empty array when none). */
export default class UnhandledErrorsReporter {
  constructor({ outputFile }) {
    this.outputFile = outputFile;
  }

  onTestRunEnd(_modules, unhandledErrors) {
    const rows = unhandledErrors.map((error) => ({
      name: String(error?.name ?? 'Error'),
      message: String(error?.message ?? error),
      stack: String(error?.stack ?? '').split('\n').slice(0, 8).join('\n'),
      // The test file an error came from, when vitest knows it.
      files: [error?.testPath, error?.VITEST_TEST_PATH].filter(Boolean).map(String),
    }));
    writeFileSync(this.outputFile, JSON.stringify(rows, null, 2));
  }
}
