import type { Client } from './connect.js';

/**
 * The CLI's reads of a lock's hash, sorted set and list, a page at a time: a
 * read-write lock or a semaphore may have thousands of holders (and any lock
 * thousands of waiters), and one command that returns all of them holds the
 * server for as long as it takes to build that reply. No command these
 * helpers send returns more than about PAGE entries (HSCAN's COUNT is a hint
 * Redis keeps to within a few entries; a hash small enough for Redis's compact
 * encoding comes back whole, and is smaller than a page).
 *
 * A lock that changes while it is read in pages is read as it was page by
 * page: HSCAN returns every field present from the first page to the last
 * (each once here), a ranged read of a list or sorted set may skip an entry
 * whose rank moved between two pages.
 */

/** Entries one command reads at most. */
export const PAGE = 500;

type Key = string | Buffer;

/** Every field of the hash at `key` with its value, each field once, a page at a time (HSCAN … COUNT PAGE). */
export async function* hashPages(redis: Client, key: Key): AsyncGenerator<[string, string][]> {
  const seen = new Set<string>();
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(key, cursor, 'COUNT', PAGE);
    cursor = next;
    const page: [string, string][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const field = flat[i]!;
      if (seen.has(field)) continue;
      seen.add(field);
      page.push([field, flat[i + 1]!]);
    }
    if (page.length > 0) yield page;
  } while (cursor !== '0');
}

/** Every field of the hash at `key`, read in pages (`hashPages`), as one record: for hashes known to be small. */
export async function wholeHash(redis: Client, key: Key): Promise<Record<string, string>> {
  const fields: Record<string, string> = {};
  for await (const page of hashPages(redis, key)) for (const [field, value] of page) fields[field] = value;
  return fields;
}

/** The list at `key`, head first, a page at a time (LRANGE of PAGE entries). */
export async function* listPages(redis: Client, key: Key): AsyncGenerator<string[]> {
  for (let start = 0; ; start += PAGE) {
    const page = await redis.lrange(key, start, start + PAGE - 1);
    if (page.length > 0) yield page;
    if (page.length < PAGE) return;
  }
}

/** The sorted set at `key` in score order with each score, a page at a time (ZRANGE by rank, PAGE entries). */
export async function* sortedSetPages(redis: Client, key: Key): AsyncGenerator<[string, number][]> {
  for (let start = 0; ; start += PAGE) {
    const flat = await redis.zrange(key, String(start), String(start + PAGE - 1), 'WITHSCORES');
    const page: [string, number][] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) page.push([flat[i]!, Number(flat[i + 1])]);
    if (page.length > 0) yield page;
    if (page.length < PAGE) return;
  }
}

/** The scores of `members` (at most a page) in the sorted set at `key`, in one round trip; a member without one is left out. */
export async function scoresOf(redis: Client, key: Key, members: readonly string[]): Promise<Map<string, number>> {
  const scores = new Map<string, number>();
  if (members.length === 0) return scores;
  const pipeline = redis.pipeline();
  for (const member of members) pipeline.zscore(key, member);
  const replies = (await pipeline.exec()) ?? [];
  replies.forEach(([error, score], i) => {
    // A key of another type answers WRONGTYPE: no lease end known.
    if (!error && score !== null && score !== undefined) scores.set(members[i]!, Number(score));
  });
  return scores;
}

/** The values of `fields` (at most a page) of the hash at `key`, null where there is none. */
export async function fieldsOf(redis: Client, key: Key, fields: readonly string[]): Promise<(string | null)[]> {
  if (fields.length === 0) return [];
  return redis.hmget(key, ...fields).catch(() => fields.map(() => null));
}
