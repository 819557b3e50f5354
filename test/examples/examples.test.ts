import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The examples `pnpm demo` runs, run here too so CI keeps them working: each
 * starts its own redis-server (REDIS_URL is cleared), prints its lifecycle
 * events and must exit by itself with status 0. They import the built packages.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

const expectations: Record<string, RegExp[]> = {
  basic: [/\[alice\] acquired/, /LockTimeoutError|Timed out after/, /\[bob\] acquired/, /locked now\? false/],
  reentrant: [/holdCount":2,.*"reentrant":true/, /locked after both\? false/],
  fencing: [/lost +\{"name":"doc:1"/, /rejected as stale/, /written by fast/],
  watchdog: [/renewed 1 lease/, /LOST nightly-export \(unreachable\)/, /job stopped/],
  'redlock-basic': [/acquired/, /QuorumError/],
  'multi-lock': [/"multiLock":\["account:1","account:2"\]/, /total 200/, /audited: null; account:1 locked\? false/],
  'read-write-lock': [/readers inside at once: 3/, /order: writer then late reader/, /rejected as stale/, /ERR_LOCK_UPGRADE/, /locked now\? false/],
  semaphore: [/peak permits in use: [1-3] of 3/, /got all 3 permits back/, /ERR_PERMIT_COUNT_MISMATCH/, /available at the end: 3/],
  operations: [
    /^holdfast watch {2}prefix example-ops {2}\d+ held {2}hand-offs\/s \d+\.\d {2}hand-offs since start \d+ {2}lost since start 0/m,
    /^catalog +rwlock:read +worker-2 \(/m,
    /^ +crashed-job \(.+\) +1 +\d+ /m,
    /^ +1 +worker-1 \(/m,
    /^Released lock `orders`$/m,
    /^worker-1 woken with token \d+$/m,
    /^holdfast ls: exit 3, holdfast: Nothing held under prefix `example-ops`$/m,
  ],
};

describe('examples', () => {
  for (const [name, patterns] of Object.entries(expectations)) {
    it(`examples/${name} runs to completion`, async () => {
      const env = { ...process.env };
      delete env.REDIS_URL;
      const { stdout } = await run('node', ['index.mjs'], { cwd: resolve(root, 'examples', name), env, timeout: 60_000 });
      for (const pattern of patterns) expect(stdout).toMatch(pattern);
    }, 90_000);
  }
});
