import type { Hold } from './hold.js';
import { callRedis, type CallPolicy } from './redis-call.js';
import { renewReply } from './replies.js';
import type { RenewalResult } from './renewal.js';
import { runScript, scripts, type RedisLike } from './scripts/index.js';

/** Keys per renew call: keeps each script run short (Redis is single-threaded). */
export const RENEW_CHUNK = 500;

/** What renewal planning needs of a hold. */
export interface Renewable {
  readonly keys: { readonly slot: number };
  readonly leaseMs: number;
}

/**
 * Groups holds into renew calls, as lists of indexes into `holds`: by hash
 * slot on Cluster (a script may only touch one slot), all together on a single
 * server; then by lease length (one lease per call); then into chunks of
 * RENEW_CHUNK.
 */
export function planRenewal(holds: readonly Renewable[], cluster: boolean): number[][] {
  const groups = new Map<string | number, number[]>();
  holds.forEach((hold, index) => {
    // A number on a single server: no string per hold and tick.
    const key = cluster ? `${hold.keys.slot}:${hold.leaseMs}` : hold.leaseMs;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(index);
  });
  const calls: number[][] = [];
  for (const group of groups.values()) {
    for (let i = 0; i < group.length; i += RENEW_CHUNK) calls.push(group.slice(i, i + RENEW_CHUNK));
  }
  return calls;
}

/** Shared by every renewed hold: a tick of 2000 leases allocates no result object for them. */
const RENEWED: RenewalResult = Object.freeze({ status: 'renewed' });

export async function renewHolds(
  redis: RedisLike,
  policy: CallPolicy,
  holds: readonly Hold[],
): Promise<RenewalResult[]> {
  const results = new Array<RenewalResult>(holds.length);
  const calls = planRenewal(holds, 'isCluster' in redis && redis.isCluster === true);
  await Promise.all(
    calls.map(async (indexes) => {
      const batch = indexes.map((i) => holds[i]!);
      try {
        const reply = await callRedis(
          () =>
            runScript(
              redis,
              scripts.renew,
              batch.map((h) => h.keys.lock),
              [batch[0]!.leaseMs, batch.map((h) => h.owner).join(' ')],
            ),
          // One attempt: the watchdog's next tick is the retry.
          { ...policy, retries: 0 },
        );
        renewReply(reply, batch.length).forEach((lost, i) => {
          results[indexes[i]!] = lost === undefined ? RENEWED : { status: 'lost', reason: lost };
        });
      } catch (error) {
        for (const i of indexes) results[i] = { status: 'failed', error };
      }
    }),
  );
  return results;
}
