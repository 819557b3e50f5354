import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { RedisServer } from './processes.js';
import { markdownTable } from './stats.js';

/**
 * Client instructions per uncontended acquire + release, counted rather than timed: each library runs in a
 * fresh `node --single-threaded` under `valgrind --tool=callgrind` (client-callgrind-child.mjs), once with N
 * cycles and once with 0; the difference over N is what a cycle costs the client, whatever the machine's load.
 * Usage: `bench:client-callgrind [cycles=2000] [passes=2] [warmup=300] [dir to keep the .cg files]`.
 */

const CHILD = fileURLToPath(new URL('./client-callgrind-child.mjs', import.meta.url));
const LIBS = ['holdfast', 'redis-semaphore', 'floor'] as const;

/** The instructions callgrind counted for `node --single-threaded --expose-gc CHILD ...args`. */
async function countNodeInstructions(args: readonly string[], outFile: string): Promise<number> {
  const { stderr } = await promisify(execFile)(
    'valgrind',
    ['--tool=callgrind', `--callgrind-out-file=${outFile}`, process.execPath, '--single-threaded', '--expose-gc', CHILD, ...args],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const match = /Collected : (\d+)/.exec(stderr);
  if (!match) throw new Error(`callgrind printed no count for ${args.join(' ')}: ${stderr.slice(-500)}`);
  return Number(match[1]);
}

async function main(): Promise<void> {
  const [cycles, passes, warmup] = [2000, 2, 300].map((fallback, i) => Number(process.argv[2 + i] ?? fallback)) as [number, number, number];
  const keep = process.argv[5];
  // valgrind does not create the directory of its output file.
  if (keep) mkdirSync(keep, { recursive: true });
  const server = await RedisServer.start();
  try {
    const perPass: Map<string, number>[] = [];
    for (let p = 1; p <= passes; p++) {
      const counts = new Map<string, number>();
      for (const lib of LIBS) {
        const out = (n: number) => (keep ? join(keep, `pass${p}-${lib}-${n}.cg`) : '/dev/null');
        const run = (n: number) => countNodeInstructions([lib, String(server.port), String(warmup), String(n)], out(n));
        const empty = await run(0);
        const full = await run(cycles);
        counts.set(lib, (full - empty) / cycles);
        console.log(`pass ${p} ${lib}: ${full} - ${empty} = ${full - empty} instructions, ${((full - empty) / cycles).toFixed(0)} per cycle`);
      }
      perPass.push(counts);
    }
    console.log(`\nClient instructions per uncontended acquire + release (callgrind, ${warmup} warm-up + ${cycles} cycles, minus a 0-cycle run):\n`);
    const rows = LIBS.map((lib) => {
      const values = perPass.map((c) => c.get(lib)!);
      const spread = (Math.max(...values) - Math.min(...values)) / Math.min(...values);
      return [lib, ...values.map((v) => v.toFixed(0)), `${(spread * 100).toFixed(2)} %`, (values[0]! / perPass[0]!.get('floor')!).toFixed(2)];
    });
    console.log(markdownTable(['Library', ...perPass.map((_, p) => `pass ${p + 1}`), 'spread', '× floor (pass 1)'], rows).join('\n'));
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
