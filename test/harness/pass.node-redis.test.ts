import { portOf } from '@holdfast/core/workspace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientMode, nodeRedisMajor, startRedis } from '../src/index.js';
import type { RedisServer } from '../src/index.js';

/**
 * Runs in the node-redis passes only (its name ends in .node-redis.test.ts: see vitest.config.ts).
 * The node-redis pass (HOLDFAST_CLIENT=node-redis, see vitest.config.ts) really runs holdfast on
 * node-redis: the clients the harness gives are detected as node-redis, their node-redis side
 * connects with the major the pass names, and the test's own commands still work on them.
 */
let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server.stop();
});

describe(`the node-redis ${nodeRedisMajor} pass`, () => {
  it('gives clients holdfast detects as node-redis', async () => {
    const redis = server.client();
    expect(clientMode).toBe('node-redis');
    expect(portOf(redis)?.kind).toBe('node-redis');
    await redis.set('pass:key', 'v');
    expect(await redis.get('pass:key')).toBe('v');
  });

  it('connects node-redis of the major it names', async () => {
    const redis = server.client() as unknown as { sendCommand(args: string[]): Promise<unknown> };
    // node-redis 6 speaks RESP3 by default, 5 RESP2 (Redis 7.0 does not show CLIENT SETINFO's lib-ver).
    const info = String(await redis.sendCommand(['CLIENT', 'INFO']));
    expect(info).toContain(nodeRedisMajor === '6' ? 'resp=3' : 'resp=2');
  });
});
