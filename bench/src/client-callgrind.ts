import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countNodeInstructions } from './callgrind-node.mjs';
import { RedisServer } from './processes.js';

/**
 * Client instructions per uncontended acquire + release, counted rather than timed: each library runs in a
 * fresh `node --single-threaded` (compilation on the main thread, so nothing runs beside the loop) under
 * `valgrind --tool=callgrind` (client-callgrind-child.mjs): connect, 300 warm-up cycles, then N cycles; and
 * again with 0 cycles.
 */

const CHILD = fileURLToPath(new URL('./client-callgrind-child.mjs', import.meta.url));

/** One set of libraries measured together, and what its floor-args adds to its floor. */
interface Mode {
  readonly libs: readonly string[];
  readonly floor: string;
  readonly floorArgs: string;
  /** How many more arguments holdfast sends per cycle than the floor (floor-args adds them). */
  readonly extraArguments: number;
}

/** holdfast's two calls send 22 arguments, the floor's 9. */
const SINGLE: Mode = { libs: ['holdfast', 'redis-semaphore', 'floor', 'floor-args'], floor: 'floor', floorArgs: 'floor-args', extraArguments: 13 };

/** holdfast's Redlock sends 22 arguments per instance, as a LockClient does; redlock@5 9. */
function redlockMode(instances: number): Mode {
  return {
    libs: ['redlock:holdfast', 'redlock:redlock5', 'redlock:floor', 'redlock:floor-args'],
    floor: 'redlock:floor',
    floorArgs: 'redlock:floor-args',
    extraArguments: 13 * instances,
  };
}

function instructions(lib: string, ports: readonly number[], warmup: number, cycles: number, outFile: string): Promise<number> {
  return countNodeInstructions(CHILD, [lib, ports.join(','), String(warmup), String(cycles)], outFile);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = argv.indexOf('--redlock');
  const instances = flag < 0 ? 0 : Number(argv.splice(flag, 2)[1]);
  if (flag >= 0 && !(Number.isInteger(instances) && instances > 0)) throw new Error('--redlock takes a number of instances');
  const cycles = Number(argv[0] ?? 2000);
  const passes = Number(argv[1] ?? 2);
  const warmup = Number(argv[2] ?? 300);
  const keep = argv[3];
  // Made when missing: valgrind cannot create the directory of its output file.
  if (keep) mkdirSync(keep, { recursive: true });
  const mode = instances > 0 ? redlockMode(instances) : SINGLE;
  const servers = await Promise.all(Array.from({ length: Math.max(1, instances) }, () => RedisServer.start()));
  const ports = servers.map((server) => server.port);
  try {
    const perPass: Map<string, number>[] = [];
    for (let p = 1; p <= passes; p++) {
      const counts = new Map<string, number>();
      for (const lib of mode.libs) {
        const out = (n: number) => (keep ? join(keep, `pass${p}-${lib.replace(':', '-')}-${n}.cg`) : '/dev/null');
        const empty = await instructions(lib, ports, warmup, 0, out(0));
        const full = await instructions(lib, ports, warmup, cycles, out(cycles));
        counts.set(lib, (full - empty) / cycles);
        console.log(`pass ${p} ${lib}: ${full} - ${empty} = ${full - empty} instructions, ${((full - empty) / cycles).toFixed(0)} per cycle`);
      }
      perPass.push(counts);
    }
    const over = instances > 0 ? ` over ${instances} instances` : '';
    console.log(`\nClient instructions per uncontended acquire + release${over} (callgrind, node --single-threaded, ${warmup} warm-up + ${cycles} cycles, minus a 0-cycle run):\n`);
    console.log(`| Library | ${perPass.map((_, p) => `pass ${p + 1}`).join(' | ')} | spread | × floor (pass 1) |`);
    console.log(`|---|${perPass.map(() => '--:').join('|')}|--:|--:|`);
    for (const lib of mode.libs) {
      const values = perPass.map((c) => c.get(lib)!);
      const spread = (Math.max(...values) - Math.min(...values)) / Math.min(...values);
      console.log(
        `| ${lib} | ${values.map((v) => v.toFixed(0)).join(' | ')} | ${(spread * 100).toFixed(2)} % | ${(values[0]! / perPass[0]!.get(mode.floor)!).toFixed(2)} |`,
      );
    }
    const perArgument = perPass.map((c) => ((c.get(mode.floorArgs)! - c.get(mode.floor)!) / mode.extraArguments).toFixed(0));
    console.log(
      `\n${mode.floorArgs} is the floor sending holdfast's ${mode.extraArguments} further arguments: ${perArgument.join(' / ')} instructions per argument (pass ${perPass.map((_, p) => p + 1).join(' / ')}).`,
    );
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
