import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { readFenced } from '@holdfast/core';
import { commandStats, commandStatsDelta, sleep, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSyncServer } from '../latch/latch-fixture.js';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

interface Line {
  readonly started?: boolean;
  readonly ran?: boolean;
  readonly token?: number;
  readonly pid?: number;
  readonly value?: { token: number; pid: number; written: boolean };
  readonly replayed?: boolean;
  readonly error?: string;
}

/** How much of a worker's stderr a failure quotes. */
const STDERR_TAIL = 4_000;

/** One worker process: its report lines, and its exit. */
class Worker {
  readonly lines: Line[] = [];
  readonly exited: Promise<number | null>;
  readonly child: ChildProcess;
  #listeners: (() => void)[] = [];
  #stderr = '';
  /** Set once the child is gone and every line it wrote has been read: no line comes after. */
  #ended: string | undefined;

  constructor(config: Record<string, unknown>) {
    this.child = spawn(process.execPath, ['--unhandled-rejections=strict', WORKER, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
    createInterface({ input: this.child.stdout! }).on('line', (text) => {
      this.lines.push(JSON.parse(text) as Line);
      this.#wake();
    });
    // A worker that died takes no `go`: its EPIPE must not become an uncaught error (next() and exited report the death).
    this.child.stdin!.on('error', () => undefined);
    // Piped rather than inherited so that a crash can be reported with its stderr; still shown as it comes.
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      process.stderr.write(chunk);
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code) => resolve(code));
      // A child that could not be spawned never exits.
      this.child.on('error', () => {
        if (this.child.pid === undefined) resolve(null);
      });
    });
    // 'close' comes after stdout ended, so a waiter woken by it has seen every line; 'error' covers a failed spawn.
    const end = (how: string) => {
      this.#ended ??= how;
      this.#wake();
    };
    this.child.on('close', (code, signal) => end(`exited with code ${code}${signal ? ` (signal ${signal})` : ''}`));
    this.child.on('error', (error) => {
      if (this.child.pid === undefined) end(`could not be spawned: ${error.message}`);
    });
  }

  #wake(): void {
    for (const listener of this.#listeners.splice(0)) listener();
  }

  /**
   * Once `count` lines match `predicate`: those lines. Rejects if the worker ends first (with its exit code
   * and stderr tail), rather than waiting for lines that can no longer come until the test times out.
   */
  async next(predicate: (line: Line) => boolean, count = 1): Promise<Line[]> {
    for (;;) {
      const found = this.lines.filter(predicate);
      if (found.length >= count) return found;
      if (this.#ended !== undefined) {
        throw new Error(`worker ${this.#ended} after ${found.length} of ${count} awaited line(s); stderr tail:\n${this.#stderr}`);
      }
      await new Promise<void>((resolve) => this.#listeners.push(resolve));
    }
  }

  /** Lets every gated fn of this process resolve. */
  go(): void {
    this.child.stdin!.write('go\n');
  }

  get outcomes(): Line[] {
    return this.lines.filter((line) => line.value !== undefined || line.error !== undefined);
  }

  get runs(): Line[] {
    return this.lines.filter((line) => line.ran === true);
  }
}

/** Subscribers of the channel whose name ends `:{tag}:<tail>` under `prefix`. */
async function subscribers(admin: Redis, prefix: string, tail: string): Promise<number> {
  const [channel] = (await admin.call('PUBSUB', 'SHARDCHANNELS', `${prefix}:{*}:${tail}`)) as string[];
  if (channel === undefined) return 0;
  return Number(((await admin.call('PUBSUB', 'SHARDNUMSUB', channel)) as unknown[])[1]);
}

describe('idempotency and single-flight across processes', () => {
  const fx = useSyncServer();
  const spawned: Worker[] = [];
  const worker = (config: Record<string, unknown>) => {
    const w = new Worker({ redisUrl: `redis://${fx.server.host}:${fx.server.port}`, ...config });
    spawned.push(w);
    fx.onCleanup(() => {
      if (w.child.exitCode === null && w.child.signalCode === null) {
        w.child.kill('SIGCONT');
        w.child.kill('SIGKILL');
      }
    });
    return w;
  };

  beforeAll(() => {
    if (!existsSync(BUILT)) throw new Error('packages/core is not built: run `pnpm build` first');
  });

  it('50 concurrent duplicates over 4 processes: fn ran once, every caller got its value, replayed for all but one', async () => {
    const prefix = fx.prefix();
    const base = { prefix, op: 'idem', name: 'payments', key: 'order-42', fingerprint: 'sha-a', fenceKey: `${prefix}:fenced`, gated: true };
    const workers = [13, 13, 12, 12].map((calls) => worker({ ...base, calls }));
    const running = workers.map((w) => w.next((line) => line.ran === true).then(() => [w]));
    // The processes that do not run fn end without a `ran` line: their waits reject then, after the race, unobserved.
    for (const wait of running) wait.catch(() => undefined);
    const [runner] = await Promise.race(running);
    // The other processes wait on the key's channel before fn ends (the runner's own other calls may too).
    await waitFor(async () => (await subscribers(fx.redis(), prefix, 'idemc:8:payments:order-42')) >= 3, { timeoutMs: 60_000 });
    runner!.go();
    for (const w of workers) expect(await w.exited).toBe(0);
    const outcomes = workers.flatMap((w) => w.outcomes);
    expect(outcomes).toHaveLength(50);
    expect(workers.flatMap((w) => w.runs)).toHaveLength(1);
    const first = outcomes.find((o) => o.replayed === false)!;
    expect(outcomes.filter((o) => o.replayed === false)).toHaveLength(1);
    for (const outcome of outcomes) expect(outcome).toEqual({ value: first.value, replayed: outcome !== first, token: first.value!.token });
    // A duplicate after completion replays too; another fingerprint is refused, fn not run.
    const late = worker({ ...base, calls: 1 });
    const conflict = worker({ ...base, calls: 1, fingerprint: 'sha-b' });
    expect(await late.exited).toBe(0);
    expect(await conflict.exited).toBe(0);
    expect(late.outcomes).toEqual([{ value: first.value, replayed: true, token: first.value!.token }]);
    expect(conflict.outcomes).toMatchObject([{ error: 'ERR_IDEMPOTENCY_CONFLICT' }]);
    expect([...late.runs, ...conflict.runs]).toEqual([]);
  }, 120_000);

  it('the first process SIGKILLed mid-fn: a waiting duplicate takes over with a greater token', async () => {
    const prefix = fx.prefix();
    const base = { prefix, op: 'idem', name: 'pay', key: 'r', fenceKey: `${prefix}:fenced`, leaseMs: 1_000, calls: 1 };
    const first = worker({ ...base, gated: true });
    const [ran] = await first.next((line) => line.ran === true);
    const second = worker({ ...base, gated: false });
    await waitFor(async () => (await subscribers(fx.redis(), prefix, 'idemc:3:pay:r')) === 1, { timeoutMs: 60_000 });
    first.child.kill('SIGKILL');
    expect(await second.exited).toBe(0);
    const [took] = second.runs;
    expect(took!.token).toBeGreaterThan(ran!.token!);
    expect(second.outcomes).toEqual([{ value: { token: took!.token, pid: took!.pid, written: true }, replayed: false, token: took!.token }]);
  }, 120_000);

  it('the first process SIGSTOPped past its lease: the waiter takes over; resumed, its fenced write is refused and its result is not stored', async () => {
    const prefix = fx.prefix();
    const fenceKey = `${prefix}:fenced`;
    const base = { prefix, op: 'idem', name: 'pay', key: 'r', fenceKey, leaseMs: 1_000, calls: 1 };
    const first = worker({ ...base, gated: true });
    const [ran] = await first.next((line) => line.ran === true);
    first.child.kill('SIGSTOP');
    const second = worker({ ...base, gated: false });
    expect(await second.exited).toBe(0);
    const [took] = second.runs;
    expect(took!.token).toBeGreaterThan(ran!.token!);
    first.child.kill('SIGCONT');
    first.go();
    expect(await first.exited).toBe(0);
    expect(first.outcomes).toMatchObject([{ error: 'ERR_LOCK_LOST' }]);
    const locks = fx.client({ prefix });
    expect(await locks.idempotency('pay').get('r')).toMatchObject({ state: 'done', token: took!.token, value: { pid: took!.pid, written: true } });
    // The frozen fn's write, made after it resumed, carried the older token.
    expect((await readFenced(fx.redis(), fenceKey))?.token).toBe(took!.token);
  }, 120_000);

  it('single-flight: 100 callers over 4 processes run fn once and all get its value; waiting sends no command', async () => {
    const prefix = fx.prefix();
    // A lease no renewal falls inside the test (renewals every third of it).
    const base = { prefix, op: 'flight', key: 'fx:2026-12-01', fenceKey: `${prefix}:fenced`, leaseMs: 600_000, calls: 25, gated: true };
    const admin = fx.redis();
    const before = await commandStats(admin);
    const workers = Array.from({ length: 4 }, () => worker(base));
    const running = workers.map((w) => w.next((line) => line.ran === true).then(() => [w]));
    // The processes that do not run fn end without a `ran` line: their waits reject then, after the race, unobserved.
    for (const wait of running) wait.catch(() => undefined);
    const [runner] = await Promise.race(running);
    // The three other processes joined (one subscription each: their callers share it).
    await waitFor(async () => (await subscribers(admin, prefix, 'sfc:fx:2026-12-01')) === 3, { timeoutMs: 60_000 });
    // Each waiting process looks twice before it sleeps (before and after subscribing), the runner
    // once: seven runs of the claim script, each one HMGET (counted inside scripts).
    await waitFor(async () => (commandStatsDelta(before, await commandStats(admin)).hmget ?? 0) >= 7, { timeoutMs: 60_000 });
    const waiting = await commandStats(admin);
    await sleep(300);
    const after = await commandStats(admin);
    const idle = commandStatsDelta(waiting, after);
    expect((idle.evalsha ?? 0) + (idle.eval ?? 0) + (idle.hmget ?? 0)).toBe(0);
    runner!.go();
    for (const w of workers) expect(await w.exited).toBe(0);
    expect(workers.flatMap((w) => w.runs)).toHaveLength(1);
    const outcomes = workers.flatMap((w) => w.outcomes);
    expect(outcomes).toHaveLength(100);
    const [{ value }] = outcomes as [Line];
    for (const outcome of outcomes) expect(outcome).toEqual({ value });
    // Fewer script calls than callers: a process's callers share one flight.
    const total = commandStatsDelta(before, await commandStats(admin));
    expect((total.evalsha ?? 0) + (total.eval ?? 0)).toBeLessThan(100);
  }, 120_000);

  it('single-flight: the runner SIGKILLed, one joined caller runs fn again and every surviving caller gets its value', async () => {
    const prefix = fx.prefix();
    const base = { prefix, op: 'flight', key: 'k', fenceKey: `${prefix}:fenced`, leaseMs: 1_000, calls: 5 };
    const runner = worker({ ...base, gated: true });
    const [ran] = await runner.next((line) => line.ran === true);
    const others = [worker({ ...base, gated: false }), worker({ ...base, gated: false })];
    await waitFor(async () => (await subscribers(fx.redis(), prefix, 'sfc:k')) === 2, { timeoutMs: 60_000 });
    runner.child.kill('SIGKILL');
    for (const w of others) expect(await w.exited).toBe(0);
    const reruns = others.flatMap((w) => w.runs);
    expect(reruns).toHaveLength(1);
    expect(reruns[0]!.token).toBeGreaterThan(ran!.token!);
    for (const outcome of others.flatMap((w) => w.outcomes)) expect(outcome.value).toMatchObject({ token: reruns[0]!.token });
  }, 120_000);
});
