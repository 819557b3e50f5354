// Prints the one closing line CI reads ("tests: N passed, N failed") from the
// JSON report vitest wrote; exits non-zero when anything failed or nothing ran.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.vitest-report.json';
const report = JSON.parse(readFileSync(file, 'utf8'));
const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
