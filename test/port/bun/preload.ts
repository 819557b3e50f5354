import { plugin } from 'bun';

/**
 * `bun test --preload` for the port contract under Bun (bun-contract.test.ts spawns it): what
 * vitest.config.ts gives the suites under Node, for Bun's runtime: Lua scripts are imported as
 * text (vitest's `holdfast-lua-text`). The workspace's packages map to their sources through
 * tsconfig.vitest.json's `paths` (`--tsconfig-override`), and `bun test` maps imports of `vitest`
 * to `bun:test` itself.
 */
plugin({
  name: 'holdfast-bun-contract',
  setup(build) {
    build.onLoad({ filter: /\.lua$/ }, async (args) => ({
      contents: `export default ${JSON.stringify(await Bun.file(args.path).text())};`,
      loader: 'js',
    }));
  },
});
