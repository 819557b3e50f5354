import { KEY_TYPES } from '@holdfast/core/keys';
import type { Client } from './connect.js';
import { HolderNames, type HolderNamesLike } from './holder-names.js';
import { SYNC_KINDS, stateKeys, type RawName, type StateKeys, type SyncKind } from './state-keys.js';

export type { SyncKind } from './state-keys.js';
import { readBarrier, readClaimRecord, readLatch } from './sync-state.js';
import { fieldsOf, hashPages, listPages, scoresOf, wholeHash } from './paged-reads.js';
import { pairs, values, type Holder, type LockState, type QueuedWaiter, type Row } from './lock-state.js';

export type { Holder, LockState, QueuedWaiter, Row } from './lock-state.js';
export { pairs, values } from './lock-state.js';

/**
 * What the CLI reads of the locks under a prefix, with plain read commands
 * (SCAN, HSCAN, HMGET, GET, PTTL, LRANGE, ZSCORE): nothing is written, and no
 * command returns more than a page of a lock's holders or waiters (paged-reads.ts). The layouts are
 * the scripts' (see @holdfast/core's _lock-hash.lua, mutex/_taken-lock.lua, _rw-state.lua,
 * _semaphore.lua and election/_election.lua); a key that does not parse as one is reported as foreign.
 */

// Each kind by the type word of its main key (the first of its KEY_TYPES entry).
const KIND_OF = new Map<string, SyncKind>(SYNC_KINDS.map((kind) => [Object.values(KEY_TYPES[kind])[0]!.slice(0, -1), kind]));
// The key past `<prefix>:`, read byte for byte (latin1): the tag, the kind, then the name's bytes.
const KEY_PATTERN = new RegExp(`^(\\{[0-9a-z]+\\}:)(${[...KIND_OF.keys()].join('|')}):`);
/**
 * The string a mutex's first hold of a free lock may be, `<owner>@<request id>|<token>`, as the
 * fields of the hash it stands for; undefined for a string of any other layout. Not part of the
 * stable layout (`@holdfast/core/keys`): read here only until core writes the hash alone.
 */
function stringLockFields(value: string): Record<string, string> | undefined {
  const m = /^([^@|]+)@([^@|]*)\|(\d+)$/.exec(value);
  return m ? { [m[1]!]: '1', [`@${m[2]!}`]: m[3]! } : undefined;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Turns a glob (`*`, `?`) into a whole-string matcher. */
export function globMatcher(pattern: string | undefined): (name: string) => boolean {
  if (pattern === undefined) return () => true;
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*').replace(/\?/g, '[\\s\\S]');
  const regex = new RegExp(`^${source}$`);
  return (name) => regex.test(name);
}

/** The primaries a SCAN must visit: every master of a Cluster, the one server otherwise. */
function scanTargets(redis: Client): Client[] {
  return 'nodes' in redis && typeof redis.nodes === 'function' && (redis as { isCluster?: boolean }).isCluster
    ? (redis.nodes('master') as Client[])
    : [redis];
}

/**
 * Every holdfast lock, read-write lock and semaphore key under `prefix` (SCAN, never KEYS).
 * Keys are read as bytes: a name that is not UTF-8 (written by something other than holdfast)
 * is still found, and read through its exact keys (`FoundName.raw`).
 */
export async function scanNames(redis: Client, prefix: string, pattern?: string): Promise<FoundName[]> {
  const matches = globMatcher(pattern);
  const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}:{*}:*`;
  const skip = Buffer.byteLength(prefix) + 1;
  const found: FoundName[] = [];
  for (const node of scanTargets(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scanBuffer(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next.toString();
      for (const key of keys) {
        const parsed = KEY_PATTERN.exec(key.toString('latin1', skip));
        if (!parsed) continue;
        const start = skip + parsed[0].length;
        const bytes = key.subarray(start);
        let exact = utf8(bytes);
        const kind = KIND_OF.get(parsed[2]!)!;
        // An idempotency key's `<name length>:<name>:<request key>` is shown as `<name>:<request key>`.
        const split = kind === 'idempotency' && exact !== undefined ? idempotencySplit(exact) : undefined;
        if (kind === 'idempotency' && split === undefined) exact = undefined;
        const name = split?.name ?? exact ?? bytes.toString('utf8');
        if (!matches(name)) continue;
        if (exact === undefined) found.push({ kind, name, raw: { base: key.subarray(0, skip + parsed[1]!.length), bytes } });
        else found.push({ kind, name, ...(split && { nameLength: split.nameLength }) });
      }
    } while (cursor !== '0');
  }
  return found.sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind));
}

/** `<name length>:<name>:<request key>` read as `<name>:<request key>` and the name's length; undefined when it is not one. */
function idempotencySplit(id: string): { name: string; nameLength: number } | undefined {
  const m = /^(\d+):/.exec(id);
  if (!m) return undefined;
  const name = id.slice(m[0].length);
  const nameLength = Number(m[1]);
  return nameLength > 0 && name[nameLength] === ':' ? { name, nameLength } : undefined;
}

/** `bytes` as text when they are UTF-8; undefined when not. */
function utf8(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The server's clock in ms (leases are dated by it). */
async function serverNow(redis: Client): Promise<number> {
  const [seconds, micros] = (await redis.time()) as [number | string, number | string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** What the reads of one snapshot share: holder names, and the server time they are dated by. */
export interface ReadContext {
  /** Names holders. */
  readonly labels: HolderNamesLike;
  /** The server's time, in ms. */
  readonly now: number;
}

/** A name found by `scanNames`. */
export interface FoundName {
  /** The lock, read-write lock or semaphore name. */
  readonly name: string;
  /** Which of them. */
  readonly kind: SyncKind;
  /** Only for a name that is not UTF-8 (`name` then has U+FFFD for its other bytes): its exact bytes and keys. */
  readonly raw?: RawName;
  /** Only for an idempotency key: the length of its name in `<name>:<request key>`. */
  readonly nameLength?: number;
}

/** Reads one lock, read-write lock or semaphore (`raw`: the exact bytes of a name that is not UTF-8, from `scanNames`). */
export async function readState(
  redis: Client,
  prefix: string,
  name: string,
  kind: SyncKind,
  context?: ReadContext,
  raw?: RawName,
  nameLength?: number,
): Promise<LockState> {
  const labels = context?.labels ?? new HolderNames(redis, prefix);
  const now = context?.now ?? (await serverNow(redis));
  const keys = stateKeys(prefix, name, kind, raw, nameLength);
  const named = { name, ...(raw && { nameHex: raw.bytes.toString('hex') }), kind, key: keys.text };
  if (kind === 'semaphore') return readSemaphore(redis, keys, named, now, labels);
  if (kind === 'latch') return readLatch(redis, keys, named);
  if (kind === 'barrier') return readBarrier(redis, keys, named, now, labels);
  if (kind === 'idempotency' || kind === 'single-flight') return readClaimRecord(redis, keys, named, labels);
  const [pttl, type, value] = values(await redis.pipeline().pttl(keys.lock).type(keys.lock).get(keys.lock).exec()) as [number, string, string | undefined];
  const base = named;
  if (type !== 'hash' && type !== 'none' && !(kind === 'lock' && type === 'string')) return { ...base, foreign: true, holders: [], waiters: [] };
  // A mutex's first hold of a free lock is a string (take.lua), read as the hash it stands for.
  const fields = kind === 'lock' && type === 'string' ? stringLockFields(value ?? '') : undefined;
  if (kind === 'lock' && type === 'string' && fields === undefined) return { ...base, foreign: true, holders: [], waiters: [] };
  const holders: Holder[] = [];
  let foreign = false;
  if (kind === 'lock' || kind === 'election') {
    // One owner (a mutex's, a leader's) and a few fields: read whole, in pages all the same.
    const hash = fields ?? (type === 'hash' ? await wholeHash(redis, keys.lock) : {});
    let token: number | undefined;
    let claim = false;
    // An election's term is a lock hash plus the leader's value ('=') and its revision ('#').
    let published: string | undefined;
    const owners: [string, number][] = [];
    for (const [field, value] of pairs(hash)) {
      if (kind === 'election' && field === '=') published = value;
      else if (kind === 'election' && field === '#') continue;
      else if (field === '@c') claim = true;
      else if (field.startsWith('@')) token = Number(value);
      else owners.push([field, Number(value)]);
    }
    if (owners.length > 0 && token === undefined) foreign = true;
    for (const [owner, holds] of owners) {
      holders.push({
        owner, client: await labels.label(owner), holds, token: token ?? 0, remainingMs: Math.max(0, pttl), handoffUnconfirmed: claim,
        ...(published !== undefined && { value: published }),
      });
    }
  } else if (type === 'hash') {
    // Lease ends in the lock's sorted set (kind|count|token|requestId|claim entries); a lock of the
    // previous layout has no sorted set and each lease end in its entry (kind|count|expiresAt|token|requestId|claim).
    for await (const page of hashPages(redis, keys.lock)) {
      const parsed = page.flatMap(([owner, value]) => {
        if (owner === '!') return []; // the writer's name, beside its entry
        const current = /^([rw])\|(\d+)\|(\d+)\|([^|]*)\|([01])$/.exec(value);
        const previous = current ? null : /^([rw])\|(\d+)\|(\d+)\|(\d+)\|([^|]*)\|([01])$/.exec(value);
        if (!current && !previous) {
          foreign = true;
          return [];
        }
        return [{ owner, current, previous }];
      });
      const ends = await scoresOf(redis, keys.expiry, parsed.filter((p) => p.current).map((p) => p.owner));
      for (const { owner, current, previous } of parsed) {
        const expiresAt = current ? (ends.get(owner) ?? 0) : Number(previous![3]);
        if (expiresAt <= now) continue;
        const m = (current ?? previous)!;
        holders.push({
          owner, client: await labels.label(owner), side: m[1] === 'r' ? 'read' : 'write',
          holds: Number(m[2]), token: Number(current ? current[3] : previous![4]), remainingMs: expiresAt - now,
          handoffUnconfirmed: (current ? current[5] : previous![6]) === '1',
        });
      }
    }
  }
  const waiters = await readQueue(redis, keys, now, labels, (id, entry) => {
    // mutex and election: expiresAt|leaseMs|requestId|owner; read-write: expiresAt|leaseMs|requestId|kind|owner
    const m = kind !== 'rwlock' ? /^(\d+)\|\d+\|[^|]+\|([\s\S]+)$/.exec(entry) : /^(\d+)\|\d+\|[^|]*\|([rw])\|([\s\S]+)$/.exec(entry);
    if (!m) return undefined;
    return {
      requestId: id, owner: kind !== 'rwlock' ? m[2]! : m[3]!, expiresAt: Number(m[1]),
      ...(kind === 'rwlock' && { side: m[2] === 'r' ? ('read' as const) : ('write' as const) }),
    };
  });
  return { ...base, foreign, holders, waiters };
}

/** A queue entry as parsed, before its client is named and its validity dated. */
type ParsedWaiter = Omit<QueuedWaiter, 'client' | 'expiresInMs'> & { readonly expiresAt: number };

/** The queue, head first, a page of ids and their entries at a time; entries that do not parse or have ended are left out. */
async function readQueue(
  redis: Client,
  keys: StateKeys,
  now: number,
  labels: HolderNamesLike,
  parse: (id: string, entry: string) => ParsedWaiter | undefined,
): Promise<QueuedWaiter[]> {
  const waiters: QueuedWaiter[] = [];
  for await (const ids of listPages(redis, keys.queue)) {
    const entries = await fieldsOf(redis, keys.waiters, ids);
    for (const [i, id] of ids.entries()) {
      const entry = entries[i];
      const parsed = entry ? parse(id, entry) : undefined;
      if (!parsed || parsed.expiresAt <= now) continue;
      const { expiresAt, ...waiter } = parsed;
      waiters.push({ ...waiter, client: await labels.label(waiter.owner), expiresInMs: expiresAt - now });
    }
  }
  return waiters;
}

async function readSemaphore(redis: Client, keys: StateKeys, base: Pick<LockState, 'name' | 'nameHex' | 'kind' | 'key'>, now: number, labels: HolderNamesLike): Promise<LockState> {
  const [stored, type] = values(await redis.pipeline().hget(keys.lock, '#').type(keys.lock).exec()) as [string | null | undefined, string];
  const count = Number(stored ?? Number.NaN);
  if ((type !== 'hash' && type !== 'none') || (type === 'hash' && Number.isNaN(count))) {
    return { ...base, foreign: true, holders: [], waiters: [] };
  }
  const holders: Holder[] = [];
  if (type === 'hash') {
    for await (const page of hashPages(redis, keys.lock)) {
      const entries = page.flatMap(([owner, value]) => {
        if (owner === '#' || owner === '=' || owner === '+' || value === '-') return [];
        const m = /^(\d+)\|(\d+)$/.exec(value);
        return m ? [{ owner, permits: Number(m[1]), token: Number(m[2]) }] : [];
      });
      const ends = await scoresOf(redis, keys.expiry, entries.map((e) => e.owner));
      for (const { owner, permits, token } of entries) {
        const end = ends.get(owner);
        if (end === undefined || end <= now) continue;
        holders.push({ owner, client: await labels.label(owner), holds: 1, permits, token, remainingMs: end - now, handoffUnconfirmed: false });
      }
    }
  }
  const waiters = await readQueue(redis, keys, now, labels, (id, entry) => {
    // expiresAt|leaseMs|permits|owner
    const m = /^(\d+)\|\d+\|(\d+)\|([\s\S]+)$/.exec(entry);
    return m ? { requestId: id, owner: m[3]!, permits: Number(m[2]), expiresAt: Number(m[1]) } : undefined;
  });
  return { ...base, foreign: false, holders, waiters, ...(!Number.isNaN(count) && { permits: count }) };
}

/** Every lock state under `prefix` whose name matches `pattern`, holders named once per client. */
export async function snapshot(redis: Client, prefix: string, pattern?: string): Promise<LockState[]> {
  const context = { labels: new HolderNames(redis, prefix), now: await serverNow(redis) };
  const found = await scanNames(redis, prefix, pattern);
  const states = await Promise.all(found.map(({ name, kind, raw, nameLength }) => readState(redis, prefix, name, kind, context, raw, nameLength)));
  // A lock freed between SCAN and the read has nothing left to show.
  return states.filter(
    (state) => state.foreign || state.holders.length > 0 || state.waiters.length > 0 || (state.count ?? 0) > 0 || state.result !== undefined,
  );
}

/**
 * Every synchronizer that has a key named `name` under `prefix` (an idempotency key's name is
 * `<name>:<request key>`: every split at a `:` is tried, each found one is returned with its `nameLength`).
 */
export async function namesOf(redis: Client, prefix: string, name: string): Promise<FoundName[]> {
  const found: FoundName[] = [];
  for (const kind of SYNC_KINDS) {
    if (kind === 'idempotency') {
      for (let at = name.indexOf(':'); at > 0; at = name.indexOf(':', at + 1)) {
        if ((await redis.exists(stateKeys(prefix, name, kind, undefined, at).lock)) === 1) found.push({ kind, name, nameLength: at });
      }
    } else if ((await redis.exists(stateKeys(prefix, name, kind).lock)) === 1) {
      found.push({ kind, name });
    }
  }
  return found;
}

/** Every kind of synchronizer that has a key named `name` under `prefix`. */
export async function kindsOf(redis: Client, prefix: string, name: string): Promise<SyncKind[]> {
  return [...new Set((await namesOf(redis, prefix, name)).map((found) => found.kind))];
}
