import { InvalidArgumentError } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import { describe, expect, it } from 'vitest';
import { useServers } from './helpers.js';

describe('Redlock over ioredis clients with keyPrefix', () => {
  const fx = useServers(3);

  it('a release wakes the waiter over pub/sub, not its backoff or the lease end', async () => {
    // Generous instance timeouts: every instance answers, however busy the machine.
    const holder = fx.redlock({ instanceTimeoutMs: 10_000 }, fx.clients({ keyPrefix: 'app:' }));
    // A backoff this long leaves the release message as the only way in time.
    const waiter = fx.redlock({ retryDelayMs: 30_000, instanceTimeoutMs: 10_000 }, fx.clients({ keyPrefix: 'app:' }));
    const name = 'kp-redlock';
    for (let i = 0; i < 3; i++) {
      const held = await holder.lock(name).acquire({ leaseMs: 60_000 });
      const waiting = waiter.lock(name).acquire({ waitMs: 10_000 });
      await new Promise((r) => setTimeout(r, 50));
      await held.release();
      const next = await waiting;
      expect(next.token).toBeGreaterThan(held.token);
      await next.release();
    }
    const lease = await holder.lock(name).acquire();
    // The keys are under the keyPrefix on a majority (the quorum may decide before the last instance answers).
    const plain = fx.clients();
    const key = holder.lock(name).keys.lock;
    const prefixed = await Promise.all(plain.map((c) => c.exists(`app:${key}`)));
    const bare = await Promise.all(plain.map((c) => c.exists(key)));
    expect(prefixed.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
    expect(bare).toEqual([0, 0, 0]);
    await lease.release();
    for (const c of plain) c.disconnect();
  });

  it('instances with different keyPrefixes are refused', () => {
    const clients = [...fx.clients({ keyPrefix: 'a:' }).slice(0, 2), fx.clients({ keyPrefix: 'b:' })[2]!];
    expect(() => new Redlock(clients)).toThrow(InvalidArgumentError);
    expect(() => new Redlock(clients)).toThrow('share one ioredis keyPrefix');
    for (const c of clients) c.disconnect();
  });
});
