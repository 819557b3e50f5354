import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';

/** A semaphore under lost replies and script cache loss: a dedicated server, a proxy in front of it. */
describe('semaphore faults', () => {
  const fx = useProxyFaults();

  /** Holders' permits as stored: never more than the permits the caller holds. */
  async function holders(key: string): Promise<number[]> {
    const hash = await fx.admin.hgetall(key);
    return Object.entries(hash)
      .filter(([field]) => field !== '#' && field !== '=')
      .map(([, value]) => Number(value.split('|')[0]));
  }

  it('a lost reply to an acquisition grants once; a lost reply to a release still releases', async () => {
    const locks = await fx.throughProxy({ prefix: 'semfaults' });
    const sem = locks.semaphore('lost-reply', { permits: 3 });
    const events: string[] = [];
    locks.on('released', () => events.push('released'));
    locks.on('lost', () => events.push('lost'));
    for (let i = 0; i < 10; i++) {
      let dropped = fx.proxy.dropNextReply();
      const lease = await sem.acquire({ permits: 2 });
      await dropped;
      expect(await holders(sem.keys.lock)).toEqual([2]);
      expect(await sem.availablePermits()).toBe(1);
      dropped = fx.proxy.dropNextReply();
      await lease.release();
      await dropped;
      expect(await holders(sem.keys.lock)).toEqual([]);
      expect(await sem.availablePermits()).toBe(3);
    }
    expect(events).toEqual(Array(10).fill('released'));
  }, 60_000);

  it('SCRIPT FLUSH breaks nothing', async () => {
    const admin = fx.admin;
    const locks = fx.locks({ prefix: 'semflush' });
    const sem = locks.semaphore('flushed', { permits: 2 });
    for (let i = 0; i < 3; i++) {
      await admin.script('FLUSH');
      const lease = await sem.acquire({ permits: 2 });
      await admin.script('FLUSH');
      await lease.extend(5_000);
      await admin.script('FLUSH');
      expect(await sem.availablePermits()).toBe(0);
      await admin.script('FLUSH');
      await lease.release();
    }
    expect(await sem.availablePermits()).toBe(2);
  });
});
