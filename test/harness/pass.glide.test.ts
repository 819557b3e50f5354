import { portOf } from '@holdfast/core/workspace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_CLIENT } from '../chaos/workers.js';
import { clientMode, startRedis } from '../src/index.js';
import type { RedisServer } from '../src/index.js';

/**
 * Runs in the GLIDE pass only (its name ends in .glide.test.ts: see vitest.config.ts). The GLIDE
 * pass (HOLDFAST_CLIENT=glide) really runs holdfast on GLIDE: the clients the harness gives are
 * detected as GLIDE, their GLIDE side speaks RESP3 to the server, the test's own commands still
 * work on them, and the chaos workers are told to run on GLIDE.
 */
let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  await server.stop();
});

describe('the GLIDE pass', () => {
  it('gives clients holdfast detects as GLIDE (RESP3), whose ioredis side serves the test', async () => {
    const redis = server.client();
    expect(clientMode).toBe('glide');
    expect(WORKER_CLIENT).toBe('glide');
    expect(portOf(redis)?.kind).toBe('glide');
    const glide = redis as unknown as { customCommand(args: string[]): Promise<unknown> };
    expect(String(await glide.customCommand(['CLIENT', 'INFO']))).toContain('resp=3');
    await redis.set('pass:key', 'v');
    expect(await redis.get('pass:key')).toBe('v');
  });
});
