import { LockClient, type Inbox } from '@holdfast/core';
import { checkInboxHistory, type InboxLogEntry } from '@holdfast/test-utils/models';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';
import { useServerFaults } from '../server-faults.js';

const KEYS = 8;
const PER_PHASE = 120;

/**
 * Two processors (two LockClients, standing for two processes) on one inbox,
 * recording every handler call's start and end per key in the order they
 * happened (one event loop: the order is the real one), and which processor
 * reported a key lost (its lease could run out under it: the only case where
 * a call that finished may be handled again).
 */
function twoProcessors(a: LockClient, b: LockClient, hooks: { beforeEnd?: (id: string) => Promise<void> | undefined; afterEnd?: () => void } = {}) {
  const logs = new Map<string, InboxLogEntry[]>();
  const lostBy = new Set<number>();
  const handled = new Set<string>();
  const inboxes = [a, b].map((locks, i) => {
    const pid = i + 1;
    const inbox = locks.inbox<string>('threads', {
      leaseMs: 2_000,
      recoverIntervalMs: 50,
      handler: async (key, ids, { token }) => {
        const log = logs.get(key) ?? [];
        logs.set(key, log);
        log.push({ ev: 's', ids, token, pid });
        await (hooks.beforeEnd?.(ids[0]!) ?? new Promise((resolve) => setImmediate(resolve)));
        log.push({ ev: 'e', ids, token, pid });
        for (const id of ids) handled.add(id);
        hooks.afterEnd?.();
      },
    });
    inbox.on('error', () => undefined);
    inbox.on('lost', () => lostBy.add(pid));
    return inbox.start();
  });
  return { inboxes, logs, lostBy, handled };
}

/** Posts `count` messages over the keys at random (seeded), each awaited: `poster:i` ids. */
async function postPhase(inbox: Inbox<string>, poster: string, from: number, count: number, posted: Set<string>): Promise<void> {
  let seed = 17 + from;
  for (let i = from; i < from + count; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    const id = `${poster}:${i}`;
    await inbox.post(`k${seed % KEYS}`, id);
    posted.add(id);
  }
}

describe('inbox: Redis restarted from its AOF mid-run', () => {
  const fx = useServerFaults({ persistent: true });

  it('SIGKILLed and restarted on the same port and dir: every stored message handled, in order, never two calls of a key at once, nothing stranded', async () => {
    const prefix = fx.prefix();
    const { locks: a } = fx.locks(prefix);
    const { locks: b } = fx.locks(prefix);
    const { locks: poster } = fx.locks(prefix);
    // One call is held open across the restart: its lease must outlive the outage or be reported lost.
    let restarted!: () => void;
    const afterRestart = new Promise<void>((resolve) => (restarted = resolve));
    const HELD = `p:${PER_PHASE / 2}`;
    const run = twoProcessors(a, b, { beforeEnd: (id) => (id === HELD ? afterRestart : undefined) });
    const producer = poster.inbox<string>('threads');
    const posted = new Set<string>();

    // No post is in flight when the server dies (a post whose reply was lost would be sent again
    // and stored twice): the fault hits the processors' calls, renewals and hand-offs.
    await postPhase(producer, 'p', 0, PER_PHASE, posted);
    await waitFor(() => [...run.logs.values()].some((log) => log.some((e) => e.ev === 's' && e.ids.includes(HELD))), { timeoutMs: 10_000 });
    const before = fx.server.pid;
    await fx.server.restart();
    expect(fx.server.pid).not.toBe(before);
    // The queues the killed server had acknowledged came back from its AOF.
    expect((await producer.keys()).length).toBeGreaterThan(0);
    restarted();
    await postPhase(producer, 'p', PER_PHASE, PER_PHASE, posted);

    await waitFor(() => [...posted].every((id) => run.handled.has(id)), { timeoutMs: 15_000 });
    const admin = fx.redis();
    await waitFor(async () => (await admin.keys(`${prefix}:{*}:ib*`)).length === 0, { timeoutMs: 10_000 });
    for (const inbox of run.inboxes) await inbox.close();

    // The server kept what it had acknowledged: every post stored, none lost in the restart.
    expect(posted.size).toBe(2 * PER_PHASE);
    expect(checkInboxHistory(posted, run.logs, (pid) => run.lostBy.has(pid))).toEqual([]);
  }, 60_000);
});

describe('inbox: connections cut through the fault proxy', () => {
  const fx = useProxyFaults();

  it('two processors whose connections are reset again and again: every stored message handled, in order, never two calls of a key at once, nothing stranded', async () => {
    const prefix = 'pf';
    const a = await fx.throughProxy({ prefix });
    // The second processor through the same proxy: both lose their connections at each cut.
    const redisB = fx.server.client({ host: fx.proxy.host, port: fx.proxy.port });
    fx.onCleanup(() => redisB.disconnect());
    const b = new LockClient(redisB, { prefix });
    fx.onCleanup(() => b.close());
    for (const locks of [a, b]) locks.on('error', () => undefined);
    // Every 15 calls ended, every connection through the proxy is reset (RST), five times.
    let ends = 0;
    let resets = 0;
    const run = twoProcessors(a, b, {
      afterEnd: () => {
        if (++ends % 15 === 0 && resets < 5) {
          fx.proxy.resetAll();
          resets++;
        }
      },
    });
    // Posts go through a direct connection: a post whose reply was cut would be sent again and stored twice.
    const producer = fx.locks({ prefix }).inbox<string>('threads');
    const posted = new Set<string>();

    await postPhase(producer, 'p', 0, PER_PHASE, posted);
    await postPhase(producer, 'p', PER_PHASE, PER_PHASE, posted);
    await waitFor(() => [...posted].every((id) => run.handled.has(id)), { timeoutMs: 15_000 });
    await waitFor(async () => (await fx.admin.keys(`${prefix}:{*}:ib*`)).length === 0, { timeoutMs: 10_000 });
    for (const inbox of run.inboxes) await inbox.close();

    expect(resets).toBe(5);
    expect(checkInboxHistory(posted, run.logs, (pid) => run.lostBy.has(pid))).toEqual([]);
  }, 60_000);
});
