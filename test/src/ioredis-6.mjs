// `node --import` entry of the ioredis 6 pass (HOLDFAST_IOREDIS=6, see vitest.config.ts): the
// processes the tests start (chaos workers, examples, README snippets) import `ioredis` as
// ioredis 6 too, so the pass covers what they run and not only the test workers.
import { register } from 'node:module';

register('./ioredis-6-hooks.mjs', import.meta.url);
