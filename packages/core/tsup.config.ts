import { defineConfig } from 'tsup';
import { packageConfig } from '../../scripts/tsup-config.js';

// Two entries: the public API, and `@holdfast/core/internal` for the other
// holdfast packages (see src/internal.ts). They share chunks, never copies.
export default defineConfig(packageConfig({ entry: ['src/index.ts', 'src/internal.ts'] }));
