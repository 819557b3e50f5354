// Preloaded (`node --require`) into the example processes the examples tests start: at exit, it
// writes which Redis client libraries the process loaded, with their majors, to
// `$HOLDFAST_EXAMPLE_CLIENTS_DIR/<pid>.json` (["node-redis 5"], say). Both libraries are CommonJS,
// so every module of theirs is in require.cache, whether the example imported or required it;
// a process that never loaded ioredis cannot have run holdfast on it.
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const dir = process.env.HOLDFAST_EXAMPLE_CLIENTS_DIR;
const PACKAGE = /^(.*[\\/]node_modules[\\/](ioredis|@redis[\\/]client))[\\/]/;

if (dir) {
  process.on('exit', () => {
    const found = new Set();
    const seen = new Set();
    for (const file of Object.keys(require.cache)) {
      const match = PACKAGE.exec(file);
      if (!match || seen.has(match[1])) continue;
      seen.add(match[1]);
      const { version } = JSON.parse(readFileSync(path.join(match[1], 'package.json'), 'utf8'));
      found.add(`${match[2] === 'ioredis' ? 'ioredis' : 'node-redis'} ${version.split('.')[0]}`);
    }
    writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify([...found].sort()));
  });
}
