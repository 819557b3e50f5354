import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { lockKeys, scripts, takeWithLease } from '@holdfast/core/internal';
import type { Redis } from 'ioredis';
import { LEASE_MS } from './libraries.js';
import type { LockLibrary, Locker } from './library-types.js';
import { connect } from './processes.js';

/**
 * The server-instruction ladder (`bench:callgrind -- --ladder`): from the
 * floor's encoding of an uncontended lock to holdfast's, one promise per rung,
 * each rung a complete lock of its own, so the difference between two rungs is
 * exactly what the promise it adds costs the server.
 *
 *   1. the floor's SET NX PX sent as a script (what being a script costs);
 *   2. + a fencing token (the slot's counter, EXISTS before INCR, the token in the value);
 *   3. + the FIFO check (the queue's key in the EXISTS);
 *   4. + resend recognition (the request id in the value: one argument, longer);
 *   5. + the reentrant hold count: holdfast's own `take.lua` and `release-taken.lua`,
 *      sent exactly as holdfast sends them, so it must come out at holdfast's row.
 *      The first hold is a string as in rung 4 (`owner@request|token`); a second
 *      hold, a waiter or a raised token turns it into the hash (owner -> count),
 *      so on this path the promise costs only the lines that tell the cases
 *      apart.
 *
 * Rungs 1–4 keep the lock as a string and release it with the floor's
 * compare-and-delete (the holder knows the whole value: owner, request id,
 * token). They live here only, never in holdfast: each lacks a promise.
 */

const source = (file: string) => readFileSync(new URL(`./ladder/${file}`, import.meta.url), 'utf8');

/** Ids as long as holdfast's: owner 16 characters (client id + 8), request id 12. */
const id = (chars: number) => randomBytes(chars).toString('base64url').slice(0, chars);

interface Rung {
  readonly id: string;
  readonly label: string;
  readonly acquire: string;
  readonly release: string;
  /** KEYS and ARGV of the acquire; `value`: what the release compares (from the token). */
  acquireCall(key: string): { keys: string[]; args: string[]; value: (token: unknown) => string };
  releaseCall(key: string, value: string): { keys: string[]; args: string[] };
  /** The release's reply when it freed the lock. */
  readonly freed: number;
}

const compareAndDelete = source('compare-and-delete.lua');
const stringRelease = (key: string, value: string) => ({ keys: [lockKeys('bench', key).lock], args: [value] });

const RUNGS: readonly Rung[] = [
  {
    id: 'ladder:script',
    label: 'ladder 1: SET NX PX in a script',
    acquire: source('set-nx.lua'),
    release: compareAndDelete,
    acquireCall(key) {
      const value = `${id(16)}|${id(12)}`;
      return { keys: [lockKeys('bench', key).lock], args: [value], value: () => value };
    },
    releaseCall: stringRelease,
    freed: 1,
  },
  {
    id: 'ladder:fenced',
    label: 'ladder 2: + fencing token',
    acquire: source('fenced.lua'),
    release: compareAndDelete,
    acquireCall(key) {
      const k = lockKeys('bench', key);
      const prefix = `${id(16)}|`;
      return { keys: [k.lock, k.fence], args: [prefix], value: (token) => `${prefix}${String(token)}` };
    },
    releaseCall: stringRelease,
    freed: 1,
  },
  {
    id: 'ladder:fifo',
    label: 'ladder 3: + FIFO check',
    acquire: source('fifo.lua'),
    release: compareAndDelete,
    acquireCall(key) {
      const k = lockKeys('bench', key);
      const prefix = `${id(16)}|`;
      return { keys: [k.lock, k.queue, k.fence], args: [prefix], value: (token) => `${prefix}${String(token)}` };
    },
    releaseCall: stringRelease,
    freed: 1,
  },
  {
    id: 'ladder:request-id',
    label: 'ladder 4: + request id (resend recognition)',
    acquire: source('fifo.lua'),
    release: compareAndDelete,
    acquireCall(key) {
      const k = lockKeys('bench', key);
      const prefix = `${id(16)}|${id(12)}|`;
      return { keys: [k.lock, k.queue, k.fence], args: [prefix], value: (token) => `${prefix}${String(token)}` };
    },
    releaseCall: stringRelease,
    freed: 1,
  },
  {
    id: 'ladder:hash',
    label: "ladder 5: + reentrant hold count (holdfast's take.lua, release-taken.lua)",
    acquire: takeWithLease(LEASE_MS).source,
    release: scripts.releaseTaken.source,
    acquireCall(key) {
      const k = lockKeys('bench', key);
      const prefix = `${id(16)}@${id(12)}|`;
      return { keys: [k.lock, k.queue, k.fence], args: [prefix], value: (token) => `${prefix}${String(token)}` };
    },
    releaseCall(key, value) {
      return { keys: [lockKeys('bench', key).lock], args: [value] };
    },
    freed: 0,
  },
];

function rungLibrary(rung: Rung): LockLibrary {
  return {
    id: rung.id,
    label: rung.label,
    settings: 'bench only: see src/callgrind-ladder.ts',
    contends: false,
    async open(port): Promise<Locker> {
      const redis: Redis = connect(port);
      const [acquireSha, releaseSha] = (await Promise.all([redis.script('LOAD', rung.acquire), redis.script('LOAD', rung.release)])) as [
        string,
        string,
      ];
      return {
        async acquire(key) {
          const { keys, args, value } = rung.acquireCall(key);
          const reply = await redis.evalsha(acquireSha, keys.length, ...keys, ...args);
          if (reply === null) throw new Error(`${rung.id}: lock busy`);
          const held = value(reply);
          return async () => {
            const { keys: releaseKeys, args: releaseArgs } = rung.releaseCall(key, held);
            const freed = await redis.evalsha(releaseSha, releaseKeys.length, ...releaseKeys, ...releaseArgs);
            if (freed !== rung.freed) throw new Error(`${rung.id}: not freed (${JSON.stringify(freed)})`);
          };
        },
        async close() {
          redis.disconnect();
        },
      };
    },
  };
}

/** The ladder's rungs, in order. */
export const LADDER: readonly LockLibrary[] = RUNGS.map(rungLibrary);
