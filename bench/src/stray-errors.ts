/**
 * Some libraries fail from their own timers, outside any call the bench made: node-redisson's wait timeout
 * unsubscribes on a connection that may be closed by then, redis-semaphore's refresh throws LostLockError
 * from setInterval by default.
 */

const seen = new Map<string, number>();
let printed = 0;

/** The library whose code is on the stack, ioredis itself only when nothing else is. */
function sourceOf(error: unknown): string {
  const stack = error instanceof Error ? error.stack ?? '' : '';
  // pnpm paths hold node_modules/.pnpm/<name@version>/node_modules/<name>/: the last is the package.
  const packages = [...stack.matchAll(/node_modules\/((?:@[^/.][^/]*\/)?[^/.][^/]*)\//g)].map((m) => m[1]!);
  return packages.find((p) => p !== 'ioredis') ?? packages[0] ?? 'unknown';
}

function record(kind: string, error: unknown): void {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const key = `${sourceOf(error)}: ${kind} ${text}`.slice(0, 160);
  seen.set(key, (seen.get(key) ?? 0) + 1);
  if (printed < 5 && seen.get(key) === 1) {
    printed++;
    console.error(`  (stray ${kind} from a library, counted: ${text.slice(0, 140)})`);
    if (process.env.BENCH_STRAY_STACKS) console.error(error instanceof Error ? error.stack : error);
  }
}

let installed = false;

export function installStrayErrorHandlers(): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (error) => record('rejection', error));
  process.on('uncaughtException', (error) => {
    // A bug in the bench itself must not be swallowed: only library frames are tolerated.
    const stack = error instanceof Error ? error.stack ?? '' : '';
    if (/node_modules/.test(stack) && !/bench\/src/.test(stack)) {
      record('exception', error);
      return;
    }
    console.error(error);
    process.exit(1);
  });
}

export function strayTotal(): number {
  let n = 0;
  for (const count of seen.values()) n += count;
  return n;
}

export function strayErrors(): Record<string, number> {
  return Object.fromEntries(seen);
}
