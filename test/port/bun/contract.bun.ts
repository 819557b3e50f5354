import { startRedis, type RedisServer } from '@holdfast/test-utils';
import type { Redis, RedisOptions } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { describePortContract } from '../contract.js';
import { bunClient } from './bun-client.js';

let server: RedisServer;
let admin: Redis;
const opened: (() => void)[] = [];

beforeAll(async () => {
  server = await startRedis();
  admin = server.client();
});

afterAll(async () => {
  for (const close of opened.splice(0)) close();
  await server?.stop();
});

describePortContract('Bun RedisClient', {
  flavour: 'bun',
  server: () => server,
  admin: () => admin,
  client: (options?: RedisOptions) => bunClient(server, options, opened),
});
