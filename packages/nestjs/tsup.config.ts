import { defineConfig } from 'tsup';
import { packageConfig } from '../../scripts/tsup-config.js';

// shims: `import.meta.url` in the CommonJS build too (cron-loader.ts makes its `require` from it).
export default defineConfig(packageConfig({ shims: true }));
