import { fileURLToPath } from 'node:url';
import type { AsyncContextState } from './async-context-child.js';
import { countNodeInstructions } from './callgrind-node.mjs';
import { RedisServer } from './processes.js';
import { ASYNC_CONTEXT_LABELS } from './scenario-async-context.js';

/**
 * What holdfast costs unrelated promise-heavy code, counted in instructions
 * rather than timed: each state of scenario-async-context.ts runs in a fresh
 * `node --single-threaded` (compilation on the main thread, so nothing runs
 * beside the loop) under `valgrind --tool=callgrind`, once with the loop and
 * once with 0 iterations; the difference is the loop's own instructions,
 * start-up and the lock calls cancelled out. Every pass is printed: on an
 * idle or a loaded machine the counts agree to well under 1 %.
 *
 * `pnpm --filter @holdfast/bench run bench:async-context-callgrind [iterations] [passes]`
 */

const CHILD = fileURLToPath(new URL('./async-context-count-child.mjs', import.meta.url));
const STATES: readonly AsyncContextState[] = ['none', 'acquire', 'withLock', 'insideWithLock'];

function instructions(state: AsyncContextState, port: number, iterations: number): Promise<number> {
  return countNodeInstructions(CHILD, [state, String(port), String(iterations)]);
}

async function main(): Promise<void> {
  const iterations = Number(process.argv[2] ?? 300_000);
  const passes = Number(process.argv[3] ?? 2);
  const server = await RedisServer.start();
  try {
    const perPass: Map<AsyncContextState, number>[] = [];
    for (let p = 0; p < passes; p++) {
      const counts = new Map<AsyncContextState, number>();
      for (const state of STATES) {
        const empty = await instructions(state, server.port, 0);
        const full = await instructions(state, server.port, iterations);
        counts.set(state, (full - empty) / iterations);
      }
      perPass.push(counts);
      console.log(
        `pass ${p + 1}: ` +
          STATES.map((s) => `${s} ${counts.get(s)!.toFixed(0)} instr/iteration (×${(counts.get(s)! / counts.get('none')!).toFixed(3)})`).join(', '),
      );
    }
    console.log(`\nUnrelated promise loop, ${iterations} iterations, instructions per iteration (callgrind, node --single-threaded):\n`);
    console.log(`| State | ${perPass.map((_, p) => `pass ${p + 1}`).join(' | ')} | × not loaded |`);
    console.log(`|---|${perPass.map(() => '--:').join('|')}|--:|`);
    for (const state of STATES) {
      const ratios = perPass.map((c) => c.get(state)! / c.get('none')!);
      const ratio = ratios.reduce((a, b) => a + b, 0) / ratios.length;
      console.log(`| ${ASYNC_CONTEXT_LABELS[state]} | ${perPass.map((c) => c.get(state)!.toFixed(0)).join(' | ')} | ${ratio.toFixed(3)} |`);
    }
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
