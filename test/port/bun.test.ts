import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { passFlavour } from './client-differences.js';

/**
 * The port contract on Bun's built-in `RedisClient`, in Bun's runtime: vitest runs on Node, where
 * Bun's client does not exist, so this test runs the contract (contract.ts, unchanged, with a
 * fixture of Bun's clients: bun/contract.bun.ts) under `bun test`, which reads vitest's
 * `describe`/`it`/`expect`, and asserts on its report: every test of the three parts ran and
 * passed. Each difference from the other clients is the `bun` row of client-differences.ts. Its
 * outcome does not depend on the pass's client, so it runs in the ioredis 5 pass only.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

describe('port contract: Bun RedisClient (under Bun)', () => {
  if (passFlavour !== 'ioredis-5') {
    it('runs in the ioredis 5 pass only (its outcome does not depend on the pass)', () => {
      expect(passFlavour).not.toBe('ioredis-5');
    });
    return;
  }

  it('passes every test of the contract: operations, subscriber, failures', async () => {
    const args = [
      'test',
      '--timeout',
      '30000',
      // The workspace's packages as their sources (the paths vitest's aliases give), Lua as text.
      '--tsconfig-override',
      './tsconfig.vitest.json',
      '--preload',
      './test/port/bun/preload.ts',
      './test/port/bun/contract.bun.ts',
    ];
    const outcome = await run(join(root, 'node_modules/.bin/bun'), args, { cwd: root, maxBuffer: 16 * 1024 * 1024 }).then(
      ({ stdout, stderr }) => ({ code: 0, report: `${stdout}\n${stderr}` }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, report: `${error.stdout ?? ''}\n${error.stderr ?? ''}` }),
    );
    const lines = outcome.report.split('\n');
    const passed = lines.filter((line) => line.startsWith('(pass) port contract: Bun RedisClient (bun) > '));
    const failed = lines.filter((line) => line.startsWith('(fail) '));
    expect(failed, outcome.report).toEqual([]);
    expect(outcome.code, outcome.report).toBe(0);
    for (const part of ['operations', 'subscriber', 'failures']) {
      expect(passed.some((line) => line.includes(` > ${part} > `)), `${part}:\n${outcome.report}`).toBe(true);
    }
    // Every test the contract has ran: none skipped or filtered out.
    expect(outcome.report).toMatch(new RegExp(`^\\s*${passed.length} pass$`, 'm'));
    expect(outcome.report).toMatch(/^\s*0 fail$/m);
    expect(outcome.report).not.toMatch(/\bskip\b|filtered out|Unhandled error/);
  }, 300_000);
});
