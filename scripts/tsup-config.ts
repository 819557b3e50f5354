import type { Options } from 'tsup';

/**
 * The one build configuration every published package uses: swapping the
 * bundler means changing this file only.
 */
export function packageConfig(overrides: Partial<Options> = {}): Options {
  return {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    platform: 'node',
    splitting: false,
    treeshake: true,
    // Lua scripts ship inlined as strings, so no file lookup happens at run time.
    loader: { '.lua': 'text' },
    ...overrides,
  };
}
