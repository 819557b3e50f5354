import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { sleep, startRedis, startRedisServers, uniqueName } from '../src/index.js';
import type { RedisServer } from '../src/index.js';
import { claimPort } from '../src/ports.js';

/** Runs the body and always stops the server, so a failed test leaks nothing. */
async function withServer(
  server: RedisServer | Promise<RedisServer>,
  body: (server: RedisServer) => Promise<void>,
): Promise<void> {
  const started = await server;
  try {
    await body(started);
  } finally {
    await started.stop();
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startRedis', () => {
  it('spawns a private server on a free loopback port that answers PING', async () => {
    const server = await startRedis();
    const pid = server.pid;
    const client = server.client();
    const dir = ((await client.config('GET', 'dir')) as string[])[1] ?? '';
    try {
      expect(server.backend).toBe('spawn');
      expect(server.host).toBe('127.0.0.1');
      expect(server.port).not.toBe(6379);
      expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
      expect(pid).toBeTypeOf('number');
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
      expect(await client.config('GET', 'save')).toEqual(['save', '']);
      expect(dir.startsWith(os.tmpdir())).toBe(true);
      // DEBUG must be usable by lock tests (e.g. DEBUG SLEEP to stall Redis).
      expect(await client.call('DEBUG', 'SLEEP', '0')).toBe('OK');
    } finally {
      await server.stop();
    }
    expect(client.status).toBe('end');
    expect(server.pid).toBeUndefined();
    expect(processExists(pid ?? -1)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  it('listens outside the ephemeral port range, bus port included, and keeps its port reserved while killed', async () => {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    await withServer(startRedis(), async (server) => {
      expect(server.port < low! || server.port > high!).toBe(true);
      expect(server.port + 10_000 < low! || server.port > high!).toBe(true);
      await server.kill();
      // No other worker can be handed the port before restart() binds it again.
      expect(claimPort(server.port)).toBe(false);
      await server.restart();
      expect(await server.client().ping()).toBe('PONG');
    });
  });

  it('passes extra args after the defaults', async () => {
    await withServer(startRedis({ args: ['--maxmemory', '1mb'] }), async (server) => {
      expect(await server.client().config('GET', 'maxmemory')).toEqual(['maxmemory', '1048576']);
    });
  });

  it('reports the redis-server log when the server cannot start', async () => {
    await expect(startRedis({ args: ['--no-such-directive', 'x'] })).rejects.toThrow(
      /exited with code 1[\s\S]*redis-server log[\s\S]*no-such-directive/,
    );
  });

  it('kill() SIGKILLs the process so commands fail', async () => {
    await withServer(startRedis(), async (server) => {
      const client = server.client({ maxRetriesPerRequest: 0, retryStrategy: () => null });
      expect(await client.ping()).toBe('PONG');
      const pid = server.pid ?? -1;
      await server.kill();
      expect(server.pid).toBeUndefined();
      expect(processExists(pid)).toBe(false);
      expect(await canConnect(server.port)).toBe(false);
      await expect(client.ping()).rejects.toThrow();
      const fresh = server.client({ lazyConnect: true, retryStrategy: () => null });
      await expect(fresh.connect()).rejects.toThrow();
    });
  });

  it('pause() stalls commands until resume()', async () => {
    await withServer(startRedis(), async (server) => {
      const client = server.client({ commandTimeout: 200 });
      expect(await client.ping()).toBe('PONG');
      server.pause();
      const started = Date.now();
      await expect(client.ping()).rejects.toThrow(/timed out/i);
      // Loose: Node timers run off a cached loop clock and may fire a little
      // early by Date.now(); the point is that it waited, not exactly how long.
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      server.resume();
      expect(await client.ping()).toBe('PONG');
    });
  });

  it('stop() works on a paused server', async () => {
    const server = await startRedis();
    const pid = server.pid ?? -1;
    server.pause();
    await server.stop();
    expect(processExists(pid)).toBe(false);
  });

  it('restart() with persistent: true reloads the AOF on the same port', async () => {
    await withServer(startRedis({ persistent: true }), async (server) => {
      const key = uniqueName('persist');
      const port = server.port;
      const before = server.client();
      expect(await before.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
      await before.set(key, 'kept');
      const oldPid = server.pid;
      await server.kill();
      await server.restart();
      expect(server.port).toBe(port);
      expect(server.pid).not.toBe(oldPid);
      expect(await server.client().get(key)).toBe('kept');
      // The pre-restart client reconnects to the same port on its own.
      expect(await before.get(key)).toBe('kept');
    });
  });

  it('restart() without persistence starts empty', async () => {
    await withServer(startRedis(), async (server) => {
      const key = uniqueName('volatile');
      await server.client().set(key, 'lost');
      await server.restart();
      expect(await server.client().get(key)).toBeNull();
    });
  });

  it('restart() waits for its port to be released by another process', async () => {
    await withServer(startRedis(), async (server) => {
      await server.kill();
      const sockets = new Set<net.Socket>();
      const squatter = net.createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => squatter.listen(server.port, '127.0.0.1', resolve));
      const restarting = server.restart();
      await sleep(300);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
      await restarting;
      expect(await server.client().ping()).toBe('PONG');
    });
  });

  it('flush() empties the server', async () => {
    await withServer(startRedis(), async (server) => {
      const client = server.client();
      await client.mset('a', '1', 'b', '2');
      await server.flush();
      expect(await client.dbsize()).toBe(0);
    });
  });
});

describe('startRedisServers', () => {
  it('starts independent servers in parallel', async () => {
    const servers = await startRedisServers(3);
    try {
      expect(new Set(servers.map((s) => s.port)).size).toBe(3);
      const key = uniqueName('multi');
      await Promise.all(servers.map((s, i) => s.client().set(key, String(i))));
      const values = await Promise.all(servers.map((s) => s.client().get(key)));
      expect(values).toEqual(['0', '1', '2']);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});
