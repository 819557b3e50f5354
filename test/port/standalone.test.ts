import { startRedis, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { passFlavour } from './client-differences.js';
import { describePortContract } from './contract.js';

/**
 * The port contract on the client of this vitest pass (ioredis 5 or 6, node-redis 5 or 6: the
 * harness's `server.client()` is a node-redis twin in the node-redis passes), over one
 * standalone server for the whole file. The server is killed and restarted by the fault tests,
 * which run last.
 */
let server: RedisServer;
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  admin = server.client();
});

afterAll(async () => {
  await server?.stop();
});

describePortContract('the pass client', {
  flavour: passFlavour,
  server: () => server,
  admin: () => admin,
  client: (options) => server.client(options),
});
