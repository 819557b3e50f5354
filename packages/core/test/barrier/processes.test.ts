import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LockClient } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSyncServer } from '../latch/latch-fixture.js';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

interface Line {
  readonly done?: boolean;
  readonly waiting?: boolean;
  readonly generation?: number;
  readonly error?: string;
  readonly reason?: string;
}

/** How much of a worker's stderr a failure quotes. */
const STDERR_TAIL = 4_000;

/** One worker process: its report lines, with the time each arrived, and its exit. */
class Party {
  readonly lines: { line: Line; at: number }[] = [];
  readonly exited: Promise<number | null>;
  readonly child: ChildProcess;
  #listeners: (() => void)[] = [];
  #stderr = '';
  /** Set once the child is gone and every line it wrote has been read: no line comes after. */
  #ended: string | undefined;

  constructor(config: Record<string, unknown>) {
    this.child = spawn(process.execPath, ['--unhandled-rejections=strict', WORKER, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    createInterface({ input: this.child.stdout! }).on('line', (text) => {
      this.lines.push({ line: JSON.parse(text) as Line, at: performance.now() });
      this.#wake();
    });
    // Piped rather than inherited so that a crash can be reported with its stderr; still shown as it comes.
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      process.stderr.write(chunk);
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    // 'close' comes after stdout ended, so a waiter woken by it has seen every line.
    this.child.on('close', (code, signal) => {
      this.#ended = `exited with code ${code}${signal ? ` (signal ${signal})` : ''}`;
      this.#wake();
    });
  }

  #wake(): void {
    for (const listener of this.#listeners.splice(0)) listener();
  }

  /**
   * The first line matching `predicate`, once it came. Rejects if the process ends first (with its exit
   * code and stderr tail), rather than waiting for a line that can no longer come until the test times out.
   */
  async next(predicate: (line: Line) => boolean): Promise<{ line: Line; at: number }> {
    for (;;) {
      const found = this.lines.find((entry) => predicate(entry.line));
      if (found) return found;
      if (this.#ended !== undefined) throw new Error(`worker ${this.#ended} before the awaited line; stderr tail:\n${this.#stderr}`);
      await new Promise<void>((resolve) => this.#listeners.push(resolve));
    }
  }
}

describe('latch and barrier across processes', () => {
  const fx = useSyncServer();
  const spawned: Party[] = [];
  const party = (config: Record<string, unknown>) => {
    const p = new Party({ redisUrl: `redis://${fx.server.host}:${fx.server.port}`, ...config });
    spawned.push(p);
    fx.onCleanup(() => {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    });
    return p;
  };

  beforeAll(() => {
    if (!existsSync(BUILT)) throw new Error('packages/core is not built: run `pnpm build` first');
  });

  it('N processes count down and wait, and waiting processes are all let through', async () => {
    const prefix = fx.prefix();
    const locks = fx.client({ prefix });
    const latch = locks.countDownLatch('procs');
    expect(await latch.trySetCount(4)).toBe(true);
    const waiters = [party({ prefix, op: 'wait', name: 'procs', waitMs: 60_000 }), party({ prefix, op: 'wait', name: 'procs', waitMs: 60_000 })];
    await Promise.all(waiters.map((w) => w.next((line) => line.waiting === true)));
    const counters = Array.from({ length: 4 }, () => party({ prefix, op: 'countDownAndWait', name: 'procs', waitMs: 60_000 }));
    for (const p of [...waiters, ...counters]) {
      expect((await p.next((line) => line.done === true || line.error !== undefined)).line).toEqual({ done: true });
      expect(await p.exited).toBe(0);
    }
    expect(await latch.count()).toBe(0);
  });

  for (const fault of ['SIGKILL', 'SIGSTOP'] as const) {
    it(`a party ${fault === 'SIGKILL' ? 'killed' : 'frozen'} (${fault}) while others wait: they all get BarrierBrokenError within its lease and 1 s`, async () => {
      const prefix = fx.prefix();
      const admin = fx.redis();
      const observing = new LockClient(admin, { prefix });
      fx.onCleanup(() => observing.close());
      const observer = observing.barrier('procs', { parties: 4 });
      const healthy = [0, 1].map(() => party({ prefix, op: 'arrive', name: 'procs', parties: 4, leaseMs: 30_000, waitMs: 60_000 }));
      await waitFor(async () => (await admin.zcount(observer.keys.parties, '-inf', '(inf')) === 2, { timeoutMs: 30_000 });
      const victim = party({ prefix, op: 'arrive', name: 'procs', parties: 4, leaseMs: 1_000, waitMs: 60_000 });
      await waitFor(async () => (await admin.zcount(observer.keys.parties, '-inf', '(inf')) === 3, { timeoutMs: 30_000 });
      const faultAt = performance.now();
      victim.child.kill(fault);
      for (const p of healthy) {
        const { line, at } = await p.next((l) => l.done === true || l.error !== undefined);
        expect(line).toEqual({ error: 'ERR_BARRIER_BROKEN', reason: 'lost', generation: 0 });
        expect(at - faultAt).toBeLessThan(1_000 + 1_000);
        expect(await p.exited).toBe(0);
      }
      if (fault === 'SIGSTOP') {
        // Thawed, the frozen party learns that it was lost.
        victim.child.kill('SIGCONT');
        expect((await victim.next((l) => l.done === true || l.error !== undefined)).line).toEqual({ error: 'ERR_BARRIER_BROKEN', reason: 'lost', generation: 0 });
        expect(await victim.exited).toBe(0);
      }
      // The next arrivals start a fresh generation, and trip it.
      const fresh = [0, 1, 2, 3].map(() => party({ prefix, op: 'arrive', name: 'procs', parties: 4, leaseMs: 5_000, waitMs: 60_000 }));
      for (const p of fresh) expect((await p.next((l) => l.done === true || l.error !== undefined)).line).toEqual({ done: true, generation: 0 });
    });
  }
});
