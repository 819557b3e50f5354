import { RedisUnreachableError } from '@holdfast/core';
import { isServerReply, isTransient, portOf } from '@holdfast/core/workspace';
import { closedPort, nodeRedis, startRedis, type RedisServer } from '@holdfast/test-utils';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Each client's errors as the port's adapters classify them (port/errors.ts, glide-errors.ts, bun-errors.ts): a reply from
 * the server is not retried, a failure of the connection is, and a node-redis client the
 * application closed comes out as RedisUnreachableError `end`, never retried. The errors are
 * the clients' own, met on a real server.
 */
let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('ioredis errors', () => {
  it('a reply is the server refusing, not retried', async () => {
    const redis = new Redis({ host: server.host, port: server.port });
    try {
      const error = await rejection(redis.call('NOSUCHCOMMAND'));
      expect(isServerReply(error)).toBe(true);
      expect(isTransient(error)).toBe(false);
    } finally {
      redis.disconnect();
    }
  });

  it('a command that found no connection is retried', async () => {
    const redis = new Redis({ host: server.host, port: server.port, lazyConnect: true, enableOfflineQueue: false });
    try {
      const error = await rejection(redis.ping());
      expect(isServerReply(error)).toBe(false);
      expect(isTransient(error)).toBe(true);
    } finally {
      redis.disconnect();
    }
  });
});

describe.each(['5', '6'] as const)('node-redis %s errors', (major) => {
  it('a reply is the server refusing, not retried', async () => {
    const client = nodeRedis(major).createClient({ socket: { host: server.host, port: server.port } });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const error = await rejection(client.sendCommand(['NOSUCHCOMMAND']));
      expect(isServerReply(error)).toBe(true);
      expect(isTransient(error)).toBe(false);
    } finally {
      client.destroy?.();
    }
  });

  it("a refusal of its own handshake (CLIENT SETINFO, unknown before Redis 7.2) is retried: met by another command after a reconnection, that command's reply went elsewhere", async () => {
    const client = nodeRedis(major).createClient({ socket: { host: server.host, port: server.port } });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const error = await rejection(client.sendCommand(['CLIENT', 'SETINFO', 'LIB-NAME', 'x']));
      expect((error as Error).message).toMatch(/unknown subcommand 'SETINFO'/i);
      expect(isServerReply(error)).toBe(false);
      expect(isTransient(error)).toBe(true);
    } finally {
      client.destroy?.();
    }
  });

  it('a refused connection is retried', async () => {
    const client = nodeRedis(major).createClient({ socket: { host: '127.0.0.1', port: await closedPort(), reconnectStrategy: false } });
    client.on('error', () => undefined);
    const error = await rejection(client.connect());
    expect(isServerReply(error)).toBe(false);
    expect(isTransient(error)).toBe(true);
  });

  it('a client the application closed is unreachable for good, not retried', async () => {
    const client = nodeRedis(major).createClient({ socket: { host: server.host, port: server.port } });
    client.on('error', () => undefined);
    await client.connect();
    client.destroy?.();
    const error = await rejection(portOf(client)!.evalsha('0'.repeat(40), ['k'], []));
    expect(error).toBeInstanceOf(RedisUnreachableError);
    expect((error as RedisUnreachableError).status).toBe('end');
    expect(isTransient(error)).toBe(false);
  });
});
