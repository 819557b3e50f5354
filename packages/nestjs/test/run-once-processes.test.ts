import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { sharedRedis, uniqueName, waitFor } from '@holdfast/test-utils';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `@RunOnce` with @nestjs/schedule firing every second in three real processes
 * (test/run-once-worker.mjs, on the built package): every firing ran exactly once across
 * them, every process fired it, and each process ends by itself after `app.close()`.
 */
interface Worker {
  readonly child: ChildProcess;
  next(): Promise<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function start(url: string, prefix: string, list: string, name: string): Worker {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'run-once-worker.mjs'), url, prefix, list, name], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  const answers: Record<string, unknown>[] = [];
  const waiting: ((answer: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const answer = JSON.parse(line) as Record<string, unknown>;
    const waiter = waiting.shift();
    if (waiter) waiter(answer);
    else answers.push(answer);
  });
  const next = () =>
    answers.length > 0 ? Promise.resolve(answers.shift()!) : new Promise<Record<string, unknown>>((resolve) => waiting.push(resolve));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, next, exited };
}

describe('@RunOnce with @nestjs/schedule in three processes', () => {
  it('runs each firing of an every-second @Cron method exactly once across them', async () => {
    const { url } = await sharedRedis();
    const prefix = uniqueName('nest-cron');
    const list = `${prefix}:runs`;
    const admin = new Redis(url);
    try {
      const workers = ['a', 'b', 'c'].map((name) => start(url, prefix, list, name));
      for (const worker of workers) expect(await worker.next()).toEqual({ ready: true });
      // Six firings after all three are up: each of them fired by every process.
      const first = await admin.llen(list);
      await waitFor(async () => (await admin.llen(list)) >= first + 6, { timeoutMs: 20_000, intervalMs: 50 });
      for (const worker of workers) worker.child.stdin!.write('close\n');
      const calls = await Promise.all(workers.map(async (worker) => (await worker.next()).calls as number));
      expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual([0, 0, 0]);

      const runs = (await admin.lrange(list, 0, -1)).map((entry) => entry.split(' ') as [string, string]);
      const ticks = runs.map(([key]) => {
        expect(key).toMatch(/^Jobs\.tick:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
        return Date.parse(key.slice('Jobs.tick:'.length));
      });
      ticks.sort((x, y) => x - y);
      // Never twice: no tick run by two processes (or twice by one).
      expect(new Set(ticks).size).toBe(ticks.length);
      // Never skipped: every second from the first run to the last.
      expect((ticks.at(-1)! - ticks[0]!) / 1000 + 1).toBe(ticks.length);
      // Every process fired (the six firings they all saw, less any a stalled event loop merged), and the others skipped.
      for (const count of calls) expect(count).toBeGreaterThanOrEqual(3);
      expect(calls.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(ticks.length);
    } finally {
      admin.disconnect();
    }
  }, 60_000);
});
