import { EvictionPolicyError } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { useServers } from './helpers.js';

describe('Redlock instances that evict keys', () => {
  const fx = useServers(3);

  it('one evicting instance refuses acquisitions by default; warn lets them through with one error event', async () => {
    const admin = fx.servers[1]!.client();
    await admin.config('SET', 'maxmemory', '200mb');
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      // Generous instance timeouts: the INFO check must get its answer, however busy the machine.
      const refusing = fx.redlock({ instanceTimeoutMs: 10_000 });
      await expect(refusing.lock('ev').acquire({ waitMs: 1_000 })).rejects.toBeInstanceOf(EvictionPolicyError);
      const warning = fx.redlock({ evictionCheck: 'warn', instanceTimeoutMs: 10_000 });
      const errors: unknown[] = [];
      warning.on('error', (e) => errors.push(e));
      await (await warning.lock('ev').acquire()).release();
      await (await warning.lock('ev').acquire()).release();
      expect(errors.filter((e) => e instanceof EvictionPolicyError)).toHaveLength(1);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      admin.disconnect();
    }
  });
});
