import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startRedis } from '../src/index.js';
import type { RedisServer } from '../src/index.js';
import { clientRecorder, expectedClients } from './example-clients.js';

/**
 * `REDIS_URL=… pnpm demo` and a machine without redis-server: the paths examples.test.ts does not
 * take (it clears REDIS_URL). Every run is bounded: an example that hangs is killed at TIMEOUT_MS
 * and fails the test, so "ends by itself" is what each test checks first. A run that succeeds
 * must also have run holdfast on the pass's client, as the process itself records.
 */
const root = path.resolve(import.meta.dirname, '../..');
const TIMEOUT_MS = 60_000;
const ALL = ['basic', 'fencing', 'reentrant', 'watchdog', 'redlock-basic', 'read-write-lock', 'semaphore', 'latch-barrier', 'operations', 'multi-lock', 'node-redis-basic'];
const USING_REDIS_URL = ['basic', 'fencing', 'reentrant', 'watchdog', 'read-write-lock', 'semaphore', 'latch-barrier', 'operations', 'multi-lock', 'node-redis-basic'];
const NOT_FOUND = /redis-server was not found on the PATH: install it \(Debian: apt-get install redis-server\) or set REDIS_URL/;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The Redis client libraries the example's process loaded (example-clients.ts). */
  clients: string[] | undefined;
}

const recorder = clientRecorder();
afterAll(() => recorder.remove());

function runExample(name: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['index.mjs'],
      { cwd: path.join(root, 'examples', name), env: recorder.env(env), timeout: TIMEOUT_MS, killSignal: 'SIGKILL' },
      (_error, stdout, stderr) =>
        resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr, clients: recorder.loaded(child.pid) }),
    );
  });
}

function envWith(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...overrides };
  for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete env[key];
  return env;
}

const expectations: Record<string, RegExp[]> = {
  basic: [/\[alice\] acquired/, /\[bob\] acquired/, /locked now\? false/],
  fencing: [/rejected as stale/, /written by fast/],
  reentrant: [/holdCount":2,.*"reentrant":true/, /locked after both\? false/],
  watchdog: [/REDIS_URL is set/, /renewed 1 lease/, /job stopped at step \d+: finished/, /released +\{"name":"nightly-export"/],
  'read-write-lock': [/readers inside at once: 3/, /order: writer then late reader/, /ERR_LOCK_UPGRADE/],
  'redlock-basic': [/REDIS_URL is not used here/, /acquired/, /QuorumError/, /stopped every redis-server; done/],
  semaphore: [/peak permits in use: [1-3] of 3/, /ERR_PERMIT_COUNT_MISMATCH/, /available at the end: 3/],
  'latch-barrier': [/reporter: all 3 imports done/, /ERR_BARRIER_BROKEN \(lost, generation 2\)/],
  operations: [/^holdfast watch {2}prefix example-ops/m, /^Released lock `orders`$/m, /^worker-1 woken with token \d+$/m],
  'multi-lock': [/total 200/, /audited: null; account:1 locked\? false/],
  'node-redis-basic': [/^db\.query UPDATE invoices .* \[\d+\]$/m],
};

describe('the demo with REDIS_URL at a running server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const name of ALL) {
    it(`examples/${name} uses it and exits by itself with status 0`, async () => {
      const run = await runExample(name, envWith({ REDIS_URL: server.url }));
      expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      for (const pattern of expectations[name]!) expect(run.stdout).toMatch(pattern);
      expect(run.clients).toEqual(expectedClients(name));
    }, TIMEOUT_MS + 30_000);
  }
});

describe('the demo with REDIS_URL at a closed port', () => {
  for (const name of USING_REDIS_URL) {
    it(`examples/${name} fails at once with status 1 and says what to do`, async () => {
      const port = await closedPort();
      const run = await runExample(name, envWith({ REDIS_URL: `redis://127.0.0.1:${port}` }));
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 1, signal: null });
      expect(run.stderr).toContain(
        `cannot reach Redis at REDIS_URL=redis://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}): ` +
          'start a Redis there, or unset REDIS_URL and the example starts its own redis-server',
      );
    }, TIMEOUT_MS + 30_000);
  }
});

describe('the demo on a machine without redis-server', () => {
  // A PATH holding node and nothing else: spawning `redis-server` fails as it would there.
  let bin: string;
  let server: RedisServer;
  beforeAll(async () => {
    bin = mkdtempSync(path.join(os.tmpdir(), 'holdfast-path-'));
    symlinkSync(process.execPath, path.join(bin, 'node'));
    server = await startRedis();
  });
  afterAll(async () => {
    rmSync(bin, { recursive: true, force: true });
    await server?.stop();
  });

  for (const name of ALL) {
    it(`examples/${name} without REDIS_URL fails at once with status 1 and says redis-server is missing`, async () => {
      const run = await runExample(name, envWith({ REDIS_URL: undefined, REDIS_SERVER_BIN: undefined, PATH: bin }));
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 1, signal: null });
      expect(run.stderr).toMatch(NOT_FOUND);
    }, TIMEOUT_MS + 30_000);
  }

  it('examples/redlock-basic with REDIS_URL set fails at once too: it needs servers it can kill', async () => {
    const run = await runExample('redlock-basic', envWith({ REDIS_URL: server.url, REDIS_SERVER_BIN: undefined, PATH: bin }));
    expect({ code: run.code, signal: run.signal }).toEqual({ code: 1, signal: null });
    expect(run.stderr).toMatch(NOT_FOUND);
    expect(run.stderr).toMatch(/starts three redis-server processes of its own, even when REDIS_URL is set/);
  }, TIMEOUT_MS + 30_000);

  for (const name of USING_REDIS_URL) {
    it(`examples/${name} with REDIS_URL set needs no redis-server`, async () => {
      const run = await runExample(name, envWith({ REDIS_URL: server.url, REDIS_SERVER_BIN: undefined, PATH: bin }));
      expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      for (const pattern of expectations[name]!) expect(run.stdout).toMatch(pattern);
      expect(run.clients).toEqual(expectedClients(name));
    }, TIMEOUT_MS + 30_000);
  }
});
