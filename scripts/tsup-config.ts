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
 */
export function packageConfig(overrides: Partial<Options> = {}): Options[] {
  const shared: Options = {
    entry: ['src/index.ts'],
    dts: true,
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    splitting: false,
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
