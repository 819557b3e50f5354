/**
 * The unrelated user code of the AsyncLocalStorage measurements (async-context-child.ts,
 * async-context-count-child.mjs): async calls, awaits, a small Promise.all now and then, nothing of locks.
 */

/** @param {number} x */
async function leaf(x) {
  return x + 1;
}

/** @param {number} x */
async function pair(x) {
  const a = await leaf(x);
  return leaf(a);
}

/** Runs the loop; the checksum keeps the work from being optimised away. */
export async function promiseLoop(iterations) {
  let x = 0;
  for (let i = 0; i < iterations; i++) {
    x = await pair(x);
    if ((i & 63) === 0) {
      const [a, b] = await Promise.all([pair(x), pair(x + 1)]);
      x = (a + b) % 1_000_003;
    }
  }
  return x;
}
