import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { Valkey } from 'iovalkey';
import type { Redis, RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passFlavour } from './client-differences.js';
import { describePortContract } from './contract.js';

/**
 * The port contract on iovalkey 0.4 (the ioredis fork for Valkey, which holdfast runs on through
 * its ioredis adapter). Its outcome does not depend on the pass's client, so its body runs in
 * the ioredis 5 pass only; the other passes check that they are not that pass.
 */
const once = passFlavour === 'ioredis-5';

if (once) {
  let server: RedisServer;
  let admin: Redis;
  const opened: Valkey[] = [];
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
  });
  afterAll(async () => {
    for (const client of opened.splice(0)) client.disconnect();
    await server?.stop();
  });
  describePortContract('iovalkey 0.4', {
    flavour: 'iovalkey',
    server: () => server,
    admin: () => admin,
    client: (options?: RedisOptions) => {
      const client = new Valkey({ host: server.host, port: server.port, ...(options as object) });
      client.on('error', () => undefined);
      opened.push(client);
      // Typed as the ioredis client the contract's fixtures are written against; holdfast detects it by shape.
      return client as unknown as Redis;
    },
  });
} else {
  describe('port contract: iovalkey 0.4', () => {
    it('runs in the ioredis 5 pass only (its outcome does not depend on the pass)', () => {
      expect(passFlavour).not.toBe('ioredis-5');
    });
  });
}
