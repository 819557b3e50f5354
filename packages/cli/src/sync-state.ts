import type { Client } from './connect.js';
import type { HolderNamesLike } from './holder-names.js';
import { values, type LockState, type QueuedWaiter } from './lock-state.js';
import { sortedSetPages } from './paged-reads.js';
import type { StateKeys } from './state-keys.js';

/**
 * What the CLI reads of a count-down latch and of a barrier, with plain read
 * commands (see @holdfast/core's latch/_latch.lua and barrier/_barrier.lua for the layouts).
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

/** The member holdfast's barrier and latch sorted sets hold (scored +inf): a set without it is not theirs. */
const MARK = '#';

/** A barrier: its party count ('p'), generation ('g'), and the parties waiting with their lease ends (read in pages). */
export async function readBarrier(redis: Client, keys: StateKeys, base: Named, now: number, labels: HolderNamesLike): Promise<LockState> {
  const [fields, mark, type, partiesType] = values(
    await redis.pipeline().hmget(keys.lock, 'p', 'g').zscore(keys.expiry, MARK).type(keys.lock).type(keys.expiry).exec(),
  ) as [(string | null)[] | undefined, string | null | undefined, string, string];
  const [p, g] = (fields ?? []).map(Number);
  if (
    (type !== 'hash' && type !== 'none') ||
    (type === 'hash' && !(Number.isSafeInteger(p) && Number.isSafeInteger(g))) ||
    (partiesType !== 'zset' && partiesType !== 'none') ||
    (partiesType === 'zset' && (mark === null || mark === undefined))
  ) {
    return { ...base, foreign: true, holders: [], waiters: [] };
  }
  const waiters: QueuedWaiter[] = [];
  if (partiesType === 'zset') {
    for await (const page of sortedSetPages(redis, keys.expiry)) {
      for (const [party, end] of page) {
        // A party whose lease ended is lost: the next barrier call breaks its generation.
        if (party === MARK || end <= now) continue;
        waiters.push({ requestId: party, owner: party, client: await labels.label(party), expiresInMs: end - now });
      }
    }
  }
  return { ...base, foreign: false, holders: [], waiters, ...(type === 'hash' && { parties: p, generation: g }) };
}

/** An idempotency key or a flight: its record (see @holdfast/core's idempotency/_record.lua), and its holder while it runs. */
export async function readClaimRecord(redis: Client, keys: StateKeys, base: Named, labels: HolderNamesLike): Promise<LockState> {
  const [fields, pttl, type] = values(await redis.pipeline().hmget(keys.lock, 'i', 's', 't', 'o', 'f').pttl(keys.lock).type(keys.lock).exec()) as [
    (string | null)[] | undefined,
    number,
    string,
  ];
  if (type === 'none') return { ...base, foreign: false, holders: [], waiters: [] };
  const [mark, state, tokenText, owner, fingerprint] = fields ?? [];
  const token = Number(tokenText);
  if (type !== 'hash' || mark !== '1' || !(state === 'r' || state === 'd' || state === 'e') || !Number.isSafeInteger(token) || owner == null || fingerprint == null) {
    return { ...base, foreign: true, holders: [], waiters: [] };
  }
  const known = { token, ...(fingerprint !== '' && { fingerprint }) };
  if (state === 'r') {
    const holder = { owner, client: await labels.label(owner), holds: 1, token, remainingMs: Math.max(0, pttl), handoffUnconfirmed: false };
    return { ...base, foreign: false, holders: [holder], waiters: [], result: 'running', ...known };
  }
  return { ...base, foreign: false, holders: [], waiters: [], result: state === 'd' ? 'done' : 'failed', ...known, ...(pttl > 0 && { expiresInMs: pttl }) };
}
