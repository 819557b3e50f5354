import { LockClient } from '@holdfast/core';
import { rwScripts, semaphoreScripts } from '@holdfast/core/workspace';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE } from '../src/paged-reads.js';
import type { LockState } from '../src/index.js';
import { holdfast } from './support.js';

const HOLDERS = 10_000;
/** More than a page, so the queue is read in pages too. */
const WAITERS = PAGE + 100;

/** At most how many entries the reply of one logged command (SLOWLOG args) can hold, or why it may hold any number. */
function replyBound(logged: string[]): number | string {
  // SLOWLOG keeps 32 arguments; the last then says how many more there were.
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(logged.at(-1) ?? '');
  const args = more ? [...logged.slice(0, -1), ...Array.from({ length: Number(more[1]) }, () => '?')] : logged;
  const [name, , ...rest] = args.map((a) => a.toLowerCase());
  switch (name) {
    case 'hscan': {
      const count = rest.indexOf('count');
      return count < 0 ? 'HSCAN without COUNT' : Number(rest[count + 1]);
    }
    case 'lrange':
    case 'zrange':
      return rest.length > 2 ? `${name} ${rest.join(' ')}` : Number(rest[1]) - Number(rest[0]) + 1;
    case 'hmget':
      return rest.length;
    case 'hget':
    case 'zscore':
    case 'type':
    case 'pttl':
    case 'get':
    case 'exists':
      return 1;
    default:
      return `${name} returns the whole key`;
  }
}

describe('inspect of a name with 10,000 holders', () => {
  let server: RedisServer;
  let admin: Redis;
  let locks: LockClient;
  const prefix = 'pages';
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
    locks = new LockClient(server.client(), { prefix, name: 'many' });
    locks.on('error', () => undefined);
    const wide = locks.readWriteLock('wide').read.keys;
    const pool = locks.semaphore('pool', { permits: HOLDERS });
    // The holders, through the library's own acquire scripts in pipelines (as many clients would, at once).
    const [rwAcquire, semAcquire] = await Promise.all([rwScripts.acquire, semaphoreScripts.acquire].map((s) => admin.script('LOAD', s.source) as Promise<string>));
    const id = (i: number) => `${locks.id}${String(i).padStart(8, '0')}`;
    for (let first = 0; first < HOLDERS; first += 1000) {
      const pipeline = admin.pipeline();
      for (let i = first; i < first + 1000; i++) {
        pipeline.evalsha(rwAcquire!, 5, wide.lock, wide.queue, wide.waiters, wide.fence, wide.expiry!, id(i), 120_000, `r${i}`, 'try', 2000, wide.channel, 'r');
        const k = pool.keys;
        pipeline.evalsha(semAcquire!, 5, k.lock, k.expiry, k.queue, k.waiters, k.fence, id(i), 120_000, `s${i}`, 'try', 1, HOLDERS, 2000, k.channel, 2000);
      }
      for (const [error, reply] of (await pipeline.exec())!) expect([error, (reply as number[])[0]]).toEqual([null, 1]);
    }
    // Every permit taken: these wait in the queue, in order.
    // close() rejects them at the end.
    for (let i = 0; i < WAITERS; i++) void pool.acquire({ waitMs: 120_000 }).catch(() => undefined);
    await waitFor(async () => (await admin.llen(pool.keys.queue)) === WAITERS, { timeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => {
    await locks?.close();
    await server?.stop();
  });

  it('lists every holder and waiter, and no command it sends returns more than a page', async () => {
    const wide = locks.readWriteLock('wide').read.keys;
    const pool = locks.semaphore('pool', { permits: HOLDERS }).keys;
    const readerIds = (await admin.hkeys(wide.lock)).sort();
    const permitIds = (await admin.hkeys(pool.lock)).filter((f) => f !== '#' && f !== '=').sort();
    const queue = await admin.lrange(pool.queue, 0, -1);
    expect(readerIds).toHaveLength(HOLDERS);
    expect(permitIds).toHaveLength(HOLDERS);

    await admin.config('SET', 'slowlog-log-slower-than', '0');
    await admin.config('SET', 'slowlog-max-len', '1000000');
    await admin.slowlog('RESET');
    const [readers, permits] = await Promise.all(
      ['wide', 'pool'].map(async (name) => {
        const { code, stdout } = await holdfast(['inspect', name, '--url', server.url, '--prefix', prefix, '--json']);
        expect(code).toBe(0);
        return JSON.parse(stdout) as LockState;
      }),
    );
    const log = (await admin.slowlog('GET', 1_000_000)) as [number, number, number, string[]][];
    await admin.config('SET', 'slowlog-log-slower-than', '10000');

    expect(readers!.holders.map((h) => h.owner).sort()).toEqual(readerIds);
    expect(readers!.holders.every((h) => h.side === 'read' && h.remainingMs > 0)).toBe(true);
    expect(permits!.holders.map((h) => h.owner).sort()).toEqual(permitIds);
    expect(permits!.permits).toBe(HOLDERS);
    expect(permits!.waiters.map((w) => w.requestId)).toEqual(queue);

    const keys = new Set<string>([wide.lock, wide.queue, wide.waiters, wide.expiry!, pool.lock, pool.queue, pool.waiters, pool.expiry]);
    const onKeys = log.map(([, , , args]) => args).filter((args) => args[1] !== undefined && keys.has(args[1]));
    expect(onKeys.length).toBeGreaterThan(0);
    // HSCAN's COUNT is a hint: a bucket chain may add a few entries.
    const tooLarge = onKeys.filter((args) => {
      const bound = replyBound(args);
      return typeof bound === 'string' || bound > PAGE;
    });
    expect(tooLarge).toEqual([]);
  }, 60_000);
});
