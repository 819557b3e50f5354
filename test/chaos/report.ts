import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FULL } from './sizes.js';

/** One row of the scenario table `pnpm chaos` prints. */
export interface ScenarioReport {
  id: string;
  fault: string;
  expected: string;
  metric: string;
  /** The measured figures, as printed in the table. */
  result: string;
}

export const RESULTS_DIR = fileURLToPath(new URL('../../.chaos-results/', import.meta.url));

/**
 * Writes the row where `print-table.mjs` finds it. Each test file runs in its
 * own process, so rows travel through files rather than memory.
 */
export function saveReport(report: ScenarioReport): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const row = { ...report, size: FULL ? 'full' : 'ci', at: new Date().toISOString() };
  writeFileSync(`${RESULTS_DIR}${report.id}.json`, `${JSON.stringify(row, null, 2)}\n`);
}
