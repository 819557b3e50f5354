import type { LockClient } from '@holdfast/core';
import { commandStats, commandStatsDelta, lockFields, differentSlotNames, sameSlotNames } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';

/** Multi-locks on a server of their own: command counts, lost replies after the server applied the call, SCRIPT FLUSH. */
describe('multi-lock faults', () => {
  const fx = useProxyFaults();

  async function throughProxy(prefix: string) {
    const locks = await fx.throughProxy({ prefix });
    // The eviction check's INFO goes first, before any reply is dropped.
    await (await locks.lock('warm-up').acquire()).release();
    return locks;
  }

  /** Each owner's hold count on each name. */
  const counts = async (locks: LockClient, names: readonly string[]) =>
    Promise.all(
      names.map(async (name) => {
        const hash = await lockFields(fx.admin, locks.lock(name).keys.lock);
        return Object.entries(hash).filter(([field]) => !field.startsWith('@')).map(([, count]) => Number(count));
      }),
    );

  for (const [layout, namesOf] of [
    ['one hash slot', sameSlotNames],
    ['different hash slots', differentSlotNames],
  ] as const) {
    it(`a lost reply to an applied acquisition or release is resent and counted once (${layout})`, async () => {
      const locks = await throughProxy(`lost-${layout.length}`);
      const names = namesOf('lost', 3);
      const events: string[] = [];
      locks.on('lost', (e) => events.push(`lost ${e.name}`));
      for (let i = 0; i < 5; i++) {
        let dropped = fx.proxy.dropNextReply();
        const lease = await locks.multiLock(names).acquire();
        await dropped;
        expect(await counts(locks, names)).toEqual([[1], [1], [1]]);
        for (const name of names) expect(await locks.lock(name).currentToken()).toBe(lease.tokens.get(name));
        dropped = fx.proxy.dropNextReply();
        await lease.release();
        await dropped;
        expect(await counts(locks, names)).toEqual([[], [], []]);
      }
      expect(events).toEqual([]);
    }, 60_000);
  }

  it('names of one hash slot cost one script call to acquire; names of n slots, n calls', async () => {
    const locks = fx.locks({ prefix: 'count' });
    await (await locks.multiLock(sameSlotNames('warm', 2)).acquire()).release();
    await (await locks.lock('warm').acquire()).release();
    for (const [names, calls] of [
      [sameSlotNames('count', 4), 1],
      [differentSlotNames('count-x', 3), 3],
    ] as const) {
      const before = await commandStats(fx.admin);
      const lease = await locks.multiLock(names).acquire();
      const after = await commandStats(fx.admin);
      // Counts include the commands the scripts ran; the script calls themselves are EVALSHA.
      const delta = commandStatsDelta(before, after);
      expect([delta['evalsha'], delta['eval']], names.join()).toEqual([calls, undefined]);
      await lease.release();
    }
  });

  it('SCRIPT FLUSH breaks nothing', async () => {
    const locks = fx.locks({ prefix: 'flush' });
    const names = sameSlotNames('flushed', 3);
    for (let i = 0; i < 3; i++) {
      await fx.admin.script('FLUSH');
      await locks.multiLock(names).withLock(async (lease) => {
        expect(lease.tokens.size).toBe(3);
        await fx.admin.script('FLUSH');
      });
      expect(await counts(locks, names)).toEqual([[], [], []]);
    }
  });
});
