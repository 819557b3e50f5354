import type { Client } from './connect.js';
import type { HolderNamesLike } from './holder-names.js';
import { values, type LockState, type QueuedWaiter } from './lock-state.js';
import { sortedSetPages } from './paged-reads.js';
import type { StateKeys } from './state-keys.js';

/**
 * What the CLI reads of a count-down latch and of a barrier, with plain read
 * commands (see @holdfast/core's latch.lua and barrier.lua for the layouts).
 * A latch has no holders and no queue, only its count; a barrier's waiting
 * parties are shown as its waiters, each with the lease it has left.
 */

type Named = Pick<LockState, 'name' | 'nameHex' | 'kind' | 'key'>;

/** A latch: its count ('n'), and its keys' time to live. */
export async function readLatch(redis: Client, keys: StateKeys, base: Named): Promise<LockState> {
  const [count, pttl, type] = values(await redis.pipeline().hget(keys.lock, 'n').pttl(keys.lock).type(keys.lock).exec()) as [
    string | null | undefined,
    number,
    string,
  ];
  const n = Number(count);
  if ((type !== 'hash' && type !== 'none') || (type === 'hash' && (count == null || !Number.isSafeInteger(n) || n < 0))) {
    return { ...base, foreign: true, holders: [], waiters: [] };
  }
  return { ...base, foreign: false, holders: [], waiters: [], count: type === 'none' ? 0 : n, ...(pttl > 0 && { expiresInMs: pttl }) };
}

/** A barrier: its party count ('p'), generation ('g'), and the parties waiting with their lease ends (read in pages). */
export async function readBarrier(redis: Client, keys: StateKeys, base: Named, now: number, labels: HolderNamesLike): Promise<LockState> {
  const [fields, type] = values(await redis.pipeline().hmget(keys.lock, 'p', 'g').type(keys.lock).exec()) as [(string | null)[] | undefined, string];
  const [p, g] = (fields ?? []).map(Number);
  if ((type !== 'hash' && type !== 'none') || (type === 'hash' && !(Number.isSafeInteger(p) && Number.isSafeInteger(g)))) {
    return { ...base, foreign: true, holders: [], waiters: [] };
  }
  const waiters: QueuedWaiter[] = [];
  // A key of another type at the parties' set is read as no party waiting, as before.
  const pages = sortedSetPages(redis, keys.expiry);
  for (;;) {
    const next = await pages.next().catch(() => ({ done: true as const, value: undefined }));
    if (next.done) break;
    for (const [party, end] of next.value) {
      // A party whose lease ended is lost: the next barrier call breaks its generation.
      if (end <= now) continue;
      waiters.push({ requestId: party, owner: party, client: await labels.label(party), expiresInMs: end - now });
    }
  }
  return { ...base, foreign: false, holders: [], waiters, ...(type === 'hash' && { parties: p, generation: g }) };
}
