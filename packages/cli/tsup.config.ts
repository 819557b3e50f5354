import { defineConfig } from 'tsup';
import { packageConfig } from '../../scripts/tsup-config.js';

// The library entry, and the `holdfast` bin (ESM, its shebang kept by tsup).
export default defineConfig(packageConfig({ entry: ['src/index.ts', 'src/cli.ts'] }));
