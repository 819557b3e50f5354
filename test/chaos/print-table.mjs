// Prints the scenario table from the rows the chaos tests saved (`pnpm chaos`).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../../.chaos-results/', import.meta.url));
let files = [];
try {
  files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
} catch {
  // no rows: nothing ran
}
if (files.length === 0) {
  console.error('no chaos results found in .chaos-results/');
  process.exit(1);
}
const cell = (text) => String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');
console.log('| scenario | fault | expected behaviour | metric | measured | size |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const file of files) {
  const row = JSON.parse(readFileSync(`${dir}${file}`, 'utf8'));
  console.log(`| ${[row.id, row.fault, row.expected, row.metric, row.result, row.size].map(cell).join(' | ')} |`);
}
