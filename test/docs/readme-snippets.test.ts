import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServers } from '../src/index.js';
import type { RedisServer } from '../src/index.js';

/**
 * The first TypeScript snippet of each README, run as a reader would paste it: against real
 * Redis, through the built packages, with nothing but the application's own functions
 * (`db.query`, `work`…) stubbed. It must exit by itself with status 0: a client left open keeps
 * Node running, and the run is killed (and the test failed) at TIMEOUT_MS. The node-redis quick
 * start of the root and core READMEs too, which must also make the calls examples/node-redis-basic
 * makes, line for line.
 */
const root = path.resolve(import.meta.dirname, '../..');
const TIMEOUT_MS = 30_000;

// The application code the snippets call: each stub prints that it ran.
const STUBS = `
const db = { query: async (sql, params) => console.log('stub db.query ' + JSON.stringify(params)) };
const work = async ({ signal }) => console.log('stub work aborted=' + signal.aborted);
const doWork = async () => console.log('stub doWork');
const pay = async (token, signal) => console.log('stub pay ' + token + ' aborted=' + signal.aborted);
`;

/** The first ```ts / ```js block of a README. */
function firstSnippet(readme: string): string {
  const text = readFileSync(path.join(root, readme), 'utf8');
  const match = /^```(?:ts|typescript|js|javascript)\n([\s\S]*?)^```/m.exec(text);
  if (!match) throw new Error(`${readme} has no TypeScript or JavaScript snippet`);
  return match[1]!;
}

/** The README's node-redis quick start: the first ```ts / ```js block importing from 'redis'. */
function nodeRedisSnippet(readme: string): string {
  const text = readFileSync(path.join(root, readme), 'utf8');
  const blocks = [...text.matchAll(/^```(?:ts|typescript|js|javascript)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  const block = blocks.find((code) => code.includes("from 'redis';"));
  if (!block) throw new Error(`${readme} has no node-redis snippet`);
  return block;
}

/** Replaces every occurrence, insisting there is one: a README edit must not silently skip it. */
function replaceAll(code: string, from: string, to: string): string {
  expect(code, `snippet contains ${from}`).toContain(from);
  return code.split(from).join(to);
}

/**
 * A folder outside the repository whose node_modules holds what a user installs: the
 * packages (linked, so their package.json exports pick the built files) and ioredis.
 */
function userProject(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'holdfast-snippet-'));
  mkdirSync(path.join(dir, 'node_modules', '@holdfast'), { recursive: true });
  for (const name of ['core', 'watchdog', 'redlock', 'otel']) {
    symlinkSync(path.join(root, 'packages', name), path.join(dir, 'node_modules', '@holdfast', name), 'dir');
  }
  // @holdfast/otel's peer dependency, as its README installs it.
  mkdirSync(path.join(dir, 'node_modules', '@opentelemetry'));
  const api = realpathSync(path.join(root, 'packages', 'otel', 'node_modules', '@opentelemetry', 'api'));
  symlinkSync(api, path.join(dir, 'node_modules', '@opentelemetry', 'api'), 'dir');
  symlinkSync(realpathSync(path.join(root, 'test', 'node_modules', 'ioredis')), path.join(dir, 'node_modules', 'ioredis'), 'dir');
  // The `redis` of the node-redis quick start, as examples/node-redis-basic installs it.
  const redis = realpathSync(path.join(root, 'examples', 'node-redis-basic', 'node_modules', 'redis'));
  symlinkSync(redis, path.join(dir, 'node_modules', 'redis'), 'dir');
  return dir;
}

function runModule(code: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  const dir = userProject();
  const file = path.join(dir, 'snippet.mjs');
  const js = ts.transpileModule(`${STUBS}\n${code}`, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  writeFileSync(file, js);
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [file], { env, timeout: TIMEOUT_MS, killSignal: 'SIGKILL' }, (_e, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr });
    });
  });
}

describe('README snippets run against real Redis and exit by themselves', () => {
  let servers: RedisServer[];
  beforeAll(async () => {
    servers = await startRedisServers(3);
  });
  afterAll(async () => {
    await Promise.all((servers ?? []).map((server) => server.stop()));
  });
  // Fresh servers for each snippet, so the first token it is handed is 1.
  beforeEach(async () => {
    await Promise.all(servers.map((server) => server.flush()));
  });

  const env = (): NodeJS.ProcessEnv => ({ ...process.env, SNIPPET_REDIS_URL: servers[0]!.url });
  const toServer = (code: string): string => replaceAll(code, 'new Redis()', 'new Redis(process.env.SNIPPET_REDIS_URL)');

  it('README.md (root)', async () => {
    const run = await runModule(toServer(firstSnippet('README.md')), env());
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(run.stdout).toMatch(/^2$/m); // inner.holdCount: re-entered
    expect(run.stdout).toMatch(/^stub db\.query \[1\]$/m);
  }, TIMEOUT_MS + 30_000);

  it('packages/core/README.md', async () => {
    const run = await runModule(toServer(firstSnippet('packages/core/README.md')), env());
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(run.stdout).toMatch(/^stub db\.query \[1\]\nstub work aborted=false$/m);
  }, TIMEOUT_MS + 30_000);

  it('packages/watchdog/README.md', async () => {
    const run = await runModule(toServer(firstSnippet('packages/watchdog/README.md')), env());
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(run.stdout).toMatch(/^stub doWork$/m);
  }, TIMEOUT_MS + 30_000);

  it('packages/otel/README.md', async () => {
    const run = await runModule(toServer(firstSnippet('packages/otel/README.md')), env());
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(run.stdout).toMatch(/^stub doWork$/m);
  }, TIMEOUT_MS + 30_000);

  it('packages/redlock/README.md', async () => {
    let code = firstSnippet('packages/redlock/README.md');
    ['a', 'b', 'c'].forEach((host, i) => {
      code = replaceAll(code, `'redis://${host}:6379'`, JSON.stringify(servers[i]!.url));
    });
    const run = await runModule(code, env());
    expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    // A round that timed out under load may have raised the fencing counters already: any token.
    expect(run.stdout).toMatch(/^stub pay [1-9]\d* aborted=false$/m);
  }, TIMEOUT_MS + 30_000);

  // The node-redis quick start of both READMEs: runnable as it stands, and the same calls as
  // examples/node-redis-basic, whose client is created from its `url` rather than a literal.
  const example = readFileSync(path.join(root, 'examples', 'node-redis-basic', 'index.mjs'), 'utf8');
  const LOCALHOST = "{ url: 'redis://localhost:6379' }";
  /** A line's code: its trailing comment and indentation removed; blank and comment lines give ''. */
  const codeOf = (line: string): string => line.replace(/\s*\/\/.*$/, '').trim();
  for (const readme of ['README.md', 'packages/core/README.md']) {
    it(`${readme}: the node-redis quick start`, async () => {
      const snippet = nodeRedisSnippet(readme);
      const exampleLines = new Set(example.split('\n').map(codeOf));
      const missing = replaceAll(snippet, LOCALHOST, '{ url }')
        .split('\n')
        .map(codeOf)
        .filter((line) => line !== '' && !exampleLines.has(line));
      expect(missing, 'snippet lines examples/node-redis-basic does not have').toEqual([]);

      const run = await runModule(replaceAll(snippet, LOCALHOST, '{ url: process.env.SNIPPET_REDIS_URL }'), env());
      expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      expect(run.stdout).toMatch(/^stub db\.query \[1\]$/m);
    }, TIMEOUT_MS + 30_000);
  }
});
