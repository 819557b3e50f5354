import { EvictionPolicyError, LockClient } from '@holdfast/core';
import type { AclRow, Outcome } from '../acl-table.js';
import { LEASE_MS } from '../mutex/acl-row.js';

/** The client's own commands: the eviction check (INFO), on a server whose policy it refuses. */
export const clientAcl: AclRow = {
  kind: 'client',
  sweep: {
    // An evicting policy, so that the eviction check (INFO) has something to refuse.
    configLines: ['maxmemory 1gb', 'maxmemory-policy volatile-lru'],
    async workload(ctx, user, tag) {
      const out: Outcome = { failures: [], broken: [] };
      const checked = new LockClient(ctx.server.client({ username: user, password: 'secret' }), {
        prefix: 'holdfast',
        evictionCheck: 'refuse',
        handoffTimeoutMs: LEASE_MS,
        commandTimeoutMs: 5_000,
        subscriptionLingerMs: 0,
      });
      checked.on('error', (error: unknown) => out.failures.push(`error event: ${(error as Error).message}`));
      const refused = await checked
        .lock(`e-${tag}`)
        .tryAcquire({ leaseMs: LEASE_MS })
        .then(
          () => false,
          (error: unknown) => error instanceof EvictionPolicyError,
        );
      if (!refused) out.failures.push('eviction check did not run');
      await checked.close();
      return out;
    },
  },
};
