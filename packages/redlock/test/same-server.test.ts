import { InvalidArgumentError } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import { describe, expect, it } from 'vitest';
import { useServers } from './helpers.js';

describe('one server under two names', () => {
  const fx = useServers(2);

  it('is refused once the instances answer, whatever names reach it', async () => {
    const [a, b] = fx.servers;
    // One server three times over: 127.0.0.1, localhost, and 127.1 (no two options alike).
    const clients = [a!.client(), a!.client({ host: 'localhost' }), b!.client({ host: '127.1' })];
    const redlock = new Redlock(clients, { prefix: fx.prefix, instanceTimeoutMs: 10_000 });
    redlock.on('error', () => undefined);
    try {
      const error = await redlock.lock('twice').tryAcquire().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(/distinct servers, got one server \(run_id \w+\) at 0 and 1/);
      // And again on the next call: a refusal is not forgotten.
      await expect(redlock.lock('twice').acquire({ waitMs: 1_000 })).rejects.toBeInstanceOf(InvalidArgumentError);
      // Nothing was written.
      const admin = a!.client();
      expect(await admin.keys(`${fx.prefix}*`)).toEqual([]);
      admin.disconnect();
    } finally {
      await redlock.close();
      for (const c of clients) c.disconnect();
    }
  });

  it('distinct servers are accepted', async () => {
    const redlock = fx.redlock({ instanceTimeoutMs: 10_000 });
    const lease = await redlock.lock('distinct').acquire();
    await lease.release();
  });
});
