import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSyncServer } from '../latch/latch-fixture.js';
import type { Redis } from 'ioredis';
import { checkHistory, type Line, type LogEntry } from './history.js';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** Every line of every worker, in the order the parent received them. */
class Fleet {
  readonly lines: Line[] = [];
  readonly children: ChildProcess[] = [];
  readonly exits: Promise<number | null>[] = [];
  #listeners: (() => void)[] = [];

  spawn(config: Record<string, unknown>): ChildProcess {
    const child = spawn(process.execPath, ['--unhandled-rejections=strict', WORKER, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: child.stdout! }).on('line', (text) => {
      this.lines.push(JSON.parse(text) as Line);
      for (const listener of this.#listeners.splice(0)) listener();
    });
    this.children.push(child);
    this.exits.push(new Promise((resolve) => child.on('exit', (code) => resolve(code))));
    return child;
  }

  /** Resolves once `predicate` holds of the lines received. */
  async until(predicate: (lines: readonly Line[]) => boolean): Promise<void> {
    while (!predicate(this.lines)) await new Promise<void>((resolve) => this.#listeners.push(resolve));
  }
}

/** Each key's log of handler calls (worker.mjs), read from Redis. */
async function readLogs(redis: Redis, prefix: string): Promise<Map<string, LogEntry[]>> {
  const logs = new Map<string, LogEntry[]>();
  for (const name of await redis.keys(`${prefix}:log:*`)) {
    logs.set(name.slice(`${prefix}:log:`.length), (await redis.lrange(name, 0, -1)).map((text) => JSON.parse(text) as LogEntry));
  }
  return logs;
}

/** Every stored message's id has an end line. */
function allHandled(lines: readonly Line[]): boolean {
  const ended = new Set(lines.filter((l) => l.ev === 'e').flatMap((l) => l.ids!));
  return lines.filter((l) => l.ev === 'p').every((l) => ended.has(l.id!));
}

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
    expect(checkHistory(posted, await readLogs(fx.redis(), prefix))).toEqual([]);
    // Exactly once without faults: 2,000 handlings, no message twice.
    const handled = fleet.lines.filter((l) => l.ev === 'e').flatMap((l) => l.ids!);
    expect(handled).toHaveLength(2000);
    expect(new Set(handled).size).toBe(2000);
    // Nothing stranded: no queue, lease, attempts or index key is left.
    expect(await fx.redis().keys(`${prefix}:{*}:ib*`)).toEqual([]);
  }, 120_000);
});
