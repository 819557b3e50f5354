import { defineConfig } from 'tsup';
import { packageConfig } from '../../scripts/tsup-config.js';

// Three entries: the public API, the key layout (`@holdfast/core/keys`) and
// `@holdfast/core/internal` for @holdfast/redlock (see src/internal.ts). They
// share chunks, never copies.
export default defineConfig(
  packageConfig({ entry: { index: 'src/index.ts', keys: 'src/keys/public-keys.ts', internal: 'src/internal.ts' } }),
);
