import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '../src/index.js';
import type { RedisServer } from '../src/index.js';

/**
 * `pnpm test` runs the suite once per ioredis major (HOLDFAST_IOREDIS, see vitest.config.ts).
 * This checks that a pass really runs the major it names, in the test workers and in the
 * processes they start: ioredis 6 connects with RESP3 (`HELLO 3`, its default), ioredis 5 with
 * RESP2, which the server reports per connection in `CLIENT INFO`.
 */
const major = process.env.HOLDFAST_IOREDIS === '6' ? 6 : 5;
const expectedResp = major === 6 ? 'resp=3' : 'resp=2';
const root = path.resolve(import.meta.dirname, '../..');

let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server.stop();
});

describe(`the ioredis ${major} pass`, () => {
  it('gives the tests ioredis clients of that major', async () => {
    const info = (await server.client().client('INFO')) as string;
    expect(info).toContain(expectedResp);
  });

  it('gives the processes the tests start ioredis of that major too', async () => {
    const code = `
      import { Redis } from 'ioredis';
      const redis = new Redis(process.env.TARGET_URL);
      process.stdout.write(await redis.client('INFO'));
      redis.disconnect();
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
      cwd: root,
      env: { ...process.env, TARGET_URL: server.url },
    });
    expect(stdout).toContain(expectedResp);
  });
});
