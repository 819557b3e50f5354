import { defineConfig } from 'tsup';
import { packageConfig } from '../../scripts/tsup-config.js';

// Three entries: the error and types, and one per database driver, so that
// importing `@holdfast/fence/pg` never loads anything written for mysql2.
export default defineConfig(packageConfig({ entry: ['src/index.ts', 'src/pg.ts', 'src/mysql.ts'] }));
