import type { Lease, LockClient } from '@holdfast/core';

/**
 * For `rounds` seconds, tries every second to take each of `leases` that its
 * holder still believes held, through another client. Returns the names it got:
 * each is a lock held twice (empty when exclusion held throughout).
 */
export async function probeForSecondHolders(leases: readonly Lease[], probe: LockClient, rounds: number): Promise<string[]> {
  const taken: string[] = [];
  for (let round = 0; round < rounds; round++) {
    await new Promise((r) => setTimeout(r, 1_000));
    for (const lease of leases) {
      if (!lease.isHeld) continue;
      const other = await probe.lock(lease.name).tryAcquire({ leaseMs: 100 }).catch(() => null);
      if (other && lease.isHeld) taken.push(lease.name);
      await other?.release().catch(() => undefined);
    }
  }
  return taken;
}
