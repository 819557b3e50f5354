import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSyncServer } from '../latch/latch-fixture.js';
import { allHandled, Fleet, readLogs } from './fleet.js';
import { checkInboxHistory } from '@holdfast/test-utils/models';
const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

describe('inbox across processes', () => {
  const fx = useSyncServer();

  beforeAll(() => {
    if (!existsSync(BUILT)) throw new Error('packages/core is not built: run `pnpm build` first');
  });

  it('4 processes post 2,000 messages over 50 keys: each handled once, in order per key, never two calls of a key at once, nothing left', async () => {
    const prefix = fx.prefix();
    const fleet = new Fleet();
    const base = { redisUrl: `redis://${fx.server.host}:${fx.server.port}`, prefix, name: 'threads', posts: 500, keys: 50, leaseMs: 5_000 };
    for (let index = 0; index < 4; index++) fleet.spawn({ ...base, index, seed: 1000 + index });
    fx.onCleanup(() => fleet.children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));
    await fleet.until((lines) => lines.filter((l) => l.ev === 'posted').length === 4 && allHandled(lines));
    for (const child of fleet.children) child.stdin!.write('stop\n');
    for (const exit of fleet.exits) expect(await exit).toBe(0);

    expect(fleet.lines.filter((l) => l.ev === 'p')).toHaveLength(2000);
    const posted = new Set(fleet.lines.filter((l) => l.ev === 'p').map((l) => l.id!));
    expect(checkInboxHistory(posted, await readLogs(fx.redis(), prefix))).toEqual([]);
    // Exactly once without faults: 2,000 handlings, no message twice.
    const handled = fleet.lines.filter((l) => l.ev === 'e').flatMap((l) => l.ids!);
    expect(handled).toHaveLength(2000);
    expect(new Set(handled).size).toBe(2000);
    // Nothing stranded: no queue, lease, attempts or index key is left.
    expect(await fx.redis().keys(`${prefix}:{*}:ib*`)).toEqual([]);
  }, 120_000);
});
