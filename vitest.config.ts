import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  plugins: [
    {
      // Lua scripts are imported as text, the same way the tsup build inlines them.
      name: 'holdfast-lua-text',
      transform(code, id) {
        if (!id.endsWith('.lua')) return undefined;
        return { code: `export default ${JSON.stringify(code)};`, map: null };
      },
    },
  ],
  resolve: {
    // Exact matches: a bare '@holdfast/core' alias would also rewrite
    // '@holdfast/core/internal' to '…/index.ts/internal'.
    alias: [
      { find: /^@holdfast\/core$/, replacement: src('./packages/core/src/index.ts') },
      { find: /^@holdfast\/core\/internal$/, replacement: src('./packages/core/src/internal.ts') },
      { find: /^@holdfast\/watchdog$/, replacement: src('./packages/watchdog/src/index.ts') },
      { find: /^@holdfast\/redlock$/, replacement: src('./packages/redlock/src/index.ts') },
      { find: /^@holdfast\/test-utils$/, replacement: src('./test/src/index.ts') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/src/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
    typecheck: { enabled: true, include: ['packages/*/test/**/*.test-d.ts'], tsconfig: './tsconfig.vitest.json' },
  },
});
