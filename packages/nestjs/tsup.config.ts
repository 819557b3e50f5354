import { defineConfig } from 'tsup';
import { packageConfig } from '../../scripts/tsup-config.js';

export default defineConfig(packageConfig());
