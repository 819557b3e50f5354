import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countNodeInstructions } from './callgrind-node.js';
import { RedisServer } from './processes.js';

/**
 * Client instructions per uncontended acquire + release, counted rather than
 * timed: each library runs in a fresh `node --single-threaded` (compilation on
 * the main thread, so nothing runs beside the loop) under
 * `valgrind --tool=callgrind` (client-callgrind-child.mjs): connect, 300
 * warm-up cycles, then N cycles; and again with 0 cycles. The difference over
 * N is the instructions per cycle of the whole client process (library,
 * ioredis, V8's builtins and JIT code, GC, libuv and the kernel-call wrappers;
 * the kernel itself is not counted). redis-server runs natively. `floor-args`
 * is the floor sending, as ARGV its script ignores, the 13 arguments holdfast's
 * two calls send beyond the floor's 9: the difference is what ioredis charges
 * the client per argument.
 *
 * `pnpm --filter @holdfast/bench run bench:client-callgrind [cycles] [passes] [warmup] [keep-dir]`
 * (defaults 2000, 2, 300). keep-dir keeps every dump (`<dir>/pass<p>-<lib>-<cycles>.cg`)
 * for callgrind_annotate. With 300 warm-up cycles V8 is still compiling the
 * hot functions (TurboFan, on the main thread under --single-threaded) during
 * the measured cycles, and that compilation is counted; a warm-up of 5000 or
 * more leaves the steady state.
 */

const CHILD = fileURLToPath(new URL('./client-callgrind-child.mjs', import.meta.url));
const LIBS = ['holdfast', 'redis-semaphore', 'floor', 'floor-args'] as const;
/** How many more arguments holdfast's two calls send than the floor's (22 against 9): floor-args adds them. */
const EXTRA_ARGUMENTS = 13;

function instructions(lib: string, port: number, warmup: number, cycles: number, outFile: string): Promise<number> {
  return countNodeInstructions(CHILD, [lib, String(port), String(warmup), String(cycles)], outFile);
}

async function main(): Promise<void> {
  const cycles = Number(process.argv[2] ?? 2000);
  const passes = Number(process.argv[3] ?? 2);
  const warmup = Number(process.argv[4] ?? 300);
  const keep = process.argv[5];
  const server = await RedisServer.start();
  try {
    const perPass: Map<string, number>[] = [];
    for (let p = 1; p <= passes; p++) {
      const counts = new Map<string, number>();
      for (const lib of LIBS) {
        const out = (n: number) => (keep ? join(keep, `pass${p}-${lib}-${n}.cg`) : '/dev/null');
        const empty = await instructions(lib, server.port, warmup, 0, out(0));
        const full = await instructions(lib, server.port, warmup, cycles, out(cycles));
        counts.set(lib, (full - empty) / cycles);
        console.log(`pass ${p} ${lib}: ${full} - ${empty} = ${full - empty} instructions, ${((full - empty) / cycles).toFixed(0)} per cycle`);
      }
      perPass.push(counts);
    }
    console.log(`\nClient instructions per uncontended acquire + release (callgrind, node --single-threaded, ${warmup} warm-up + ${cycles} cycles, minus a 0-cycle run):\n`);
    console.log(`| Library | ${perPass.map((_, p) => `pass ${p + 1}`).join(' | ')} | spread | × floor (pass 1) |`);
    console.log(`|---|${perPass.map(() => '--:').join('|')}|--:|--:|`);
    for (const lib of LIBS) {
      const values = perPass.map((c) => c.get(lib)!);
      const spread = (Math.max(...values) - Math.min(...values)) / Math.min(...values);
      console.log(
        `| ${lib} | ${values.map((v) => v.toFixed(0)).join(' | ')} | ${(spread * 100).toFixed(2)} % | ${(values[0]! / perPass[0]!.get('floor')!).toFixed(2)} |`,
      );
    }
    const perArgument = perPass.map((c) => ((c.get('floor-args')! - c.get('floor')!) / EXTRA_ARGUMENTS).toFixed(0));
    console.log(
      `\nfloor-args is the floor sending holdfast's ${EXTRA_ARGUMENTS} further arguments: ${perArgument.join(' / ')} instructions per argument (pass ${perPass.map((_, p) => p + 1).join(' / ')}).`,
    );
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
