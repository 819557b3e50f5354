import { scripts } from '@holdfast/core/internal';
import { waitFor } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { useServers } from './helpers.js';

type Admin = ReturnType<ReturnType<typeof useServers>['clients']>[number];

/** The ARGV of every release call one server ran, oldest first (SLOWLOG with a 0 µs threshold records every command). */
async function releaseArgvs(admin: Admin): Promise<string[][]> {
  const entries = (await admin.slowlog('GET', 1000)) as [number, number, number, string[]][];
  return entries
    .map(([, , , args]) => args)
    .filter((args) => args[0]?.toLowerCase() === 'evalsha' && args[1] === scripts.release.sha)
    .map((args) => args.slice(3 + Number(args[2])))
    .reverse();
}

describe('release calls', () => {
  const fx = useServers(3);
  let admins: Admin[] = [];
  afterEach(async () => {
    await Promise.all(admins.map((admin) => admin.config('SET', 'slowlog-log-slower-than', '10000')));
    for (const admin of admins) admin.disconnect();
    admins = [];
  });

  it('the last release sends the release script 4 arguments (every hold goes, as with a 5th of 1), an inner one 5', async () => {
    admins = fx.clients();
    await Promise.all(admins.map((admin) => admin.config('SET', 'slowlog-log-slower-than', '0')));
    // Loaded beforehand, so every release is an EVALSHA (a first call may otherwise be an
    // EVAL of the source, which SLOWLOG shows cut at 128 bytes).
    await Promise.all(admins.map((admin) => admin.script('LOAD', scripts.release.source)));
    await Promise.all(admins.map((admin) => admin.slowlog('RESET')));
    const lock = fx.redlock().lock('release-args');
    await lock.withLock(async () => {
      await lock.withLock(() => undefined);
      expect(await lock.isLocked()).toBe(true);
    });
    expect(await lock.isLocked()).toBe(false);
    // The release resolved on a majority; the last instance may still be running its call.
    const logged = async () => Promise.all(admins.map(releaseArgvs));
    await waitFor(async () => (await logged()).every((argvs) => argvs.some((argv) => argv.length === 4)));
    const argvs = await logged();
    // (A grant that came too late is dropped whole in the background: also 4 arguments.)
    for (const list of argvs) expect(list.filter((argv) => argv.length === 4).length).toBeGreaterThanOrEqual(1);
    // Every other release dropped one hold: the inner one, where the re-entry was granted
    // (a majority at least), or a re-entry granted too late to count.
    const inner = argvs.map((list) => list.filter((argv) => argv.length !== 4));
    expect(inner.filter((list) => list.length > 0).length).toBeGreaterThanOrEqual(2);
    for (const list of inner) for (const argv of list) expect([argv.length, argv[4]]).toEqual([5, '0']);
  });
});
