// `pnpm chaos`: the chaos scenarios at full size, one file at a time (timing
// bounds are measured without the rest of the suite competing for the CPU),
// then the scenario table with the measured figures.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
rmSync(`${root}.chaos-results`, { recursive: true, force: true });
const vitest = spawnSync(
  process.execPath,
  [`${root}node_modules/vitest/vitest.mjs`, 'run', 'test/chaos', '--no-file-parallelism'],
  { cwd: root, stdio: 'inherit', env: { ...process.env, HOLDFAST_CHAOS: 'full' } },
);
const table = spawnSync(process.execPath, [fileURLToPath(new URL('./print-table.mjs', import.meta.url))], {
  stdio: 'inherit',
});
process.exit(vitest.status !== 0 ? (vitest.status ?? 1) : (table.status ?? 1));
