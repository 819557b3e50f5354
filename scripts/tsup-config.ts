import type { Options } from 'tsup';

/**
 * ESM-only dependencies that the CommonJS build carries inside itself: a CJS
 * loader without require(esm) (Jest, Node before 20.19 or with
 * `--no-experimental-require-module`) cannot `require()` them.
 */
const ESM_ONLY_DEPENDENCIES = ['p-retry', 'is-network-error'];

/**
 * The one build configuration every published package uses: swapping the
 * bundler means changing this file only. Two builds: ESM with every
 * dependency external, CommonJS with the ESM-only ones bundled.
 *
 * Code splitting is on for both formats: a package with several entries
 * (`@holdfast/core` and `@holdfast/core/internal`) then keeps each module,
 * and so each class, in one shared chunk, so that an error thrown through one
 * entry is `instanceof` the class exported by the other (tsup splits CommonJS
 * too when asked; test/consumer checks both formats from the packed package).
 */
export function packageConfig(overrides: Partial<Options> = {}): Options[] {
  const shared: Options = {
    entry: ['src/index.ts'],
    dts: true,
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    splitting: true,
    treeshake: true,
    // Lua scripts ship inlined as strings, so no file lookup happens at run time.
    loader: { '.lua': 'text' },
    ...overrides,
  };
  return [
    { ...shared, format: ['esm'], clean: true },
    { ...shared, format: ['cjs'], clean: false, noExternal: ESM_ONLY_DEPENDENCIES },
  ];
}
