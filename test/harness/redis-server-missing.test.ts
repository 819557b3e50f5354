import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedis } from '../src/index.js';

/**
 * A machine without redis-server must be told so in words it can act on, not with setpriv's
 * "exited with code 127". REDIS_SERVER_BIN overrides the binary the harness spawns, which is
 * how these tests make it missing on a machine that has it.
 */
const MESSAGE = /redis-server was not found on the PATH: install it \(Debian: apt-get install redis-server\) or set REDIS_URL/;
const saved = { bin: process.env.REDIS_SERVER_BIN, path: process.env.PATH };

afterEach(() => {
  if (saved.bin === undefined) delete process.env.REDIS_SERVER_BIN;
  else process.env.REDIS_SERVER_BIN = saved.bin;
  process.env.PATH = saved.path;
});

async function startError(): Promise<Error | undefined> {
  return startRedis().then(
    () => undefined,
    (e: unknown) => e as Error,
  );
}

describe('startRedis without a redis-server binary', () => {
  it('says redis-server was not found and how to get one, when the name is not on the PATH', async () => {
    process.env.REDIS_SERVER_BIN = 'holdfast-no-such-redis-server';
    const error = await startError();
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(MESSAGE);
    expect(error!.message).toContain('holdfast-no-such-redis-server');
    expect(error!.message).not.toMatch(/code 127|setpriv/);
  });

  it('says the same for a path that does not exist', async () => {
    process.env.REDIS_SERVER_BIN = '/nonexistent/holdfast/redis-server';
    const error = await startError();
    expect(error!.message).toMatch(MESSAGE);
    expect(error!.message).not.toMatch(/code 127|setpriv/);
  });

  it('searches the PATH for a bare name: a PATH without redis-server gets the same message', async () => {
    process.env.REDIS_SERVER_BIN = 'redis-server';
    const emptyDir = mkdtempSync(path.join(os.tmpdir(), 'holdfast-empty-path-'));
    process.env.PATH = emptyDir;
    try {
      const error = await startError();
      expect(error!.message).toMatch(MESSAGE);
      expect(error!.message).not.toMatch(/code 127|setpriv/);
    } finally {
      rmSync(emptyDir, { recursive: true, force: true });
    }
  });
});
