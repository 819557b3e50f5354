import { LockClient, type Leader } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/** Collects what `observe()` yields until `stop` aborts. */
function observeInto(client: LockClient, name: string, stop: AbortSignal): { seen: (Leader | null)[]; done: Promise<void> } {
  const seen: (Leader | null)[] = [];
  const done = (async () => {
    for await (const leader of client.election(name).observe({ signal: stop })) seen.push(leader);
  })();
  return { seen, done };
}

const values = (seen: (Leader | null)[]) => seen.map((leader) => leader?.value ?? null);

describe('election observe: every change, in order', () => {
  const fx = useRedis();

  it('changes made back to back, faster than any read, are each yielded once, in order', async () => {
    const [a, b, watcher] = await Promise.all([fx.client(), fx.client(), fx.client()]);
    const stop = new AbortController();
    const first = observeInto(watcher, 'burst', stop.signal);
    await waitFor(() => first.seen.length === 1);
    const termA = await a.election('burst', { termMs: 30_000 }).campaign({ value: 'a' });
    // A second observer joins while the changes are under way.
    let late: ReturnType<typeof observeInto> | undefined;
    const proclaimed: string[] = [];
    const sends: Promise<void>[] = [];
    for (let i = 1; i <= 60; i++) {
      // Values that hold the message's own separator, and repeat a value two changes back.
      const value = i % 10 === 0 ? `v${i - 2}|x|${i - 2}` : `v${i}|x|${i}`;
      proclaimed.push(value);
      sends.push(termA.proclaim(value));
      if (i === 30) late = observeInto(watcher, 'burst', stop.signal);
    }
    await Promise.all(sends);
    const candidate = b.election('burst', { termMs: 30_000 }).campaign({ value: 'b' });
    const redis = await fx.redis();
    await waitFor(async () => (await redis.llen(b.election('burst').keys.queue)) === 1);
    await termA.resign();
    const termB = await candidate;
    await termB.resign();
    const expected = [null, 'a', ...proclaimed, null, 'b', null];
    await waitFor(() => first.seen.length === expected.length && late!.seen.at(-1) === null && late!.seen.length > 3);
    stop.abort();
    await Promise.all([first.done, late!.done]);
    expect(values(first.seen)).toEqual(expected);
    expect(first.seen.filter((l) => l !== null).map((l) => l.epoch)).toEqual([
      ...Array<number>(61).fill(termA.epoch),
      termB.epoch,
    ]);
    // The late observer: whatever it saw first, then every change after it, none twice, none skipped.
    const lateValues = values(late!.seen);
    const start = expected.findIndex((value, i) => i > 0 && value === lateValues[0] && expected.slice(i).join('\n') === lateValues.join('\n'));
    expect(start).toBeGreaterThan(0);
  });

  it('a term that ends without a word is yielded as null before the next term, which follows in order', async () => {
    const [a, b, watcher] = await Promise.all([fx.client(), fx.client(), fx.client()]);
    const stop = new AbortController();
    const { seen, done } = observeInto(watcher, 'vanish', stop.signal);
    await waitFor(() => seen.length === 1);
    const termA = await a.election('vanish', { termMs: 400 }).campaign({ value: 'a' });
    // a's process stops renewing; b stands and is elected once the term runs out.
    await a.close();
    const termB = await b.election('vanish', { termMs: 30_000 }).campaign({ value: 'b', waitMs: 10_000 });
    await termB.proclaim('b2');
    await waitFor(() => seen.length === 5, { timeoutMs: 10_000 });
    stop.abort();
    await done;
    expect(seen).toEqual([null, { value: 'a', epoch: termA.epoch }, null, { value: 'b', epoch: termB.epoch }, { value: 'b2', epoch: termB.epoch }]);
  });
});

describe('election observe: a gap in the subscription', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());

  it('after the subscriber reconnects, the state read then is yielded (changes made while it was cut off, as that state)', async () => {
    const admin = server.client();
    const leader = new LockClient(server.client());
    const watcher = new LockClient(server.client());
    const stop = new AbortController();
    const { seen, done } = observeInto(watcher, 'gap', stop.signal);
    await waitFor(() => seen.length === 1);
    const term = await leader.election('gap', { termMs: 30_000 }).campaign({ value: 'a' });
    await waitFor(() => seen.length === 2);
    // The watcher's subscriber is cut off, and the changes go out before it can reconnect.
    await admin.client('KILL', 'TYPE', 'PUBSUB');
    await term.proclaim('b');
    await term.proclaim('c');
    await waitFor(() => seen.at(-1)?.value === 'c', { timeoutMs: 10_000 });
    // Heard again from then on.
    await term.proclaim('d');
    await waitFor(() => seen.at(-1)?.value === 'd');
    stop.abort();
    await done;
    expect(seen[0]).toBeNull();
    expect(seen[1]).toEqual({ value: 'a', epoch: term.epoch });
    expect(values(seen).slice(-2)).toEqual(['c', 'd']);
    // Never backwards, never twice.
    expect(new Set(values(seen)).size).toBe(seen.length);
    await term.resign();
    await leader.close();
    await watcher.close();
    admin.disconnect();
  });
});

describe('election observe: Redis loses its data', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());

  it('a history that went backwards (FLUSHALL, a restart without persistence) is noticed: the state read, then every change', async () => {
    const leader = new LockClient(server.client());
    const watcher = new LockClient(server.client(), { handoffTimeoutMs: 200 });
    for (const locks of [leader, watcher]) locks.on('error', () => undefined);
    const election = leader.election('lost', { termMs: 30_000 });
    const stop = new AbortController();
    const { seen, done } = observeInto(watcher, 'lost', stop.signal);
    await waitFor(() => seen.length === 1);
    for (const value of ['a', 'b']) await (await election.campaign({ value })).resign();
    const c = await election.campaign({ value: 'c' });
    expect(c.epoch).toBe(3);
    await waitFor(() => seen.at(-1)?.value === 'c');

    // Everything gone, the subscription kept: epochs start again at 1, below the observer's.
    await server.flush();
    const d = await election.campaign({ value: 'd' });
    expect(d.epoch).toBe(1);
    await waitFor(() => seen.at(-1)?.value === 'd');
    await d.proclaim('d2');
    await waitFor(() => seen.at(-1)?.value === 'd2');

    // Restarted empty: the subscription drops, and the read once it is back is behind the observer.
    await server.kill();
    await server.restart();
    const e = await election.campaign({ value: 'e', waitMs: 10_000 });
    expect(e.epoch).toBe(1);
    await waitFor(() => seen.at(-1)?.value === 'e', { timeoutMs: 10_000 });
    await e.proclaim('e2');
    await waitFor(() => seen.at(-1)?.value === 'e2');
    await e.resign();
    await waitFor(() => seen.at(-1) === null);
    stop.abort();
    await done;
    expect(values(seen).slice(0, 9)).toEqual([null, 'a', null, 'b', null, 'c', null, 'd', 'd2']);
    // After the restart: nobody (read before e was elected), or e at once (read after).
    expect([['e', 'e2', null], [null, 'e', 'e2', null]]).toContainEqual(values(seen).slice(9));
    await leader.close();
    await watcher.close();
  });
});
