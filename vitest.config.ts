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
    alias: {
      '@holdfast/core': src('./packages/core/src/index.ts'),
      '@holdfast/watchdog': src('./packages/watchdog/src/index.ts'),
      '@holdfast/redlock': src('./packages/redlock/src/index.ts'),
      '@holdfast/test-utils': src('./test/src/index.ts'),
    },
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
