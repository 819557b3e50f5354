import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LockClient, type Lease, type PermitLease } from '@holdfast/core';
import type { Cluster, Redis } from 'ioredis';

/** The built bin, as `npx @holdfast/cli` runs it. */
export const BIN = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const PTY = fileURLToPath(new URL('./pty-run.py', import.meta.url));

/** Runs `holdfast …` with pipes (no terminal): its exit code and output. */
export function holdfast(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // maxBuffer: a lock with thousands of holders prints megabytes.
    const child = execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, maxBuffer: 256 * 2 ** 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

/** Options of `underPty`: when to send SIGINT, what to type after which prompt. */
export interface PtyOptions {
  interruptAfter?: string;
  answerAfter?: [prompt: string, reply: string];
  columns?: number;
}

/** Runs `holdfast …` under a real pseudo-terminal (Python's pty module): the terminal's bytes and the exit code. */
export function underPty(args: string[], options: PtyOptions = {}): Promise<{ code: number; output: string }> {
  const config = {
    argv: [process.execPath, BIN, ...args],
    interrupt_after: options.interruptAfter ?? null,
    answer_after: options.answerAfter ?? null,
    columns: options.columns ?? 160,
  };
  return new Promise((resolve, reject) => {
    execFile('python3', [PTY, JSON.stringify(config)], (error, stdout) => {
      if (error) reject(error);
      else resolve(JSON.parse(stdout) as { code: number; output: string });
    });
  });
}

/** What `scene()` holds: a mutex with two waiters, a read-write lock with two readers, a semaphore with a waiter. */
export interface Scene {
  readonly clients: LockClient[];
  readonly leases: (Lease | PermitLease)[];
  /** The queued acquisitions, in queue order (rejected by close). */
  readonly waiting: Promise<Lease | PermitLease>[];
  /** Closes every client (their waits reject with ClientClosedError, which is expected here). */
  close(): Promise<void>;
}

/**
 * Holds, under `prefix`: `orders` (mutex, held by a client named billing,
 * waited for by `worker-1` then `worker-2`), `catalog` (read-write, two
 * readers), `pool` (semaphore of 3, 2 held, a waiter for 2).
 */
export async function scene(redis: () => Redis | Cluster, prefix: string, waitForQueue: (key: string, length: number) => Promise<void>): Promise<Scene> {
  const billing = new LockClient(redis(), { prefix, name: 'billing' });
  const worker1 = new LockClient(redis(), { prefix, name: 'worker-1' });
  const worker2 = new LockClient(redis(), { prefix, name: 'worker-2' });
  const anonymous = new LockClient(redis(), { prefix });
  const clients = [billing, worker1, worker2, anonymous];
  // At teardown the waits that close() rejects clean up their queue entries
  // while the servers stop: those failures are expected, and kept out of the output.
  const teardownErrors: unknown[] = [];
  for (const client of clients) client.on('error', (error) => teardownErrors.push(error));
  const leases: (Lease | PermitLease)[] = [];
  const waiting: Promise<Lease | PermitLease>[] = [];
  // Each wait's rejection (close(), or a set-up step below failing) is expected: taken as soon as the wait is made.
  const wait = (acquisition: Promise<Lease | PermitLease>) => {
    acquisition.catch(() => undefined);
    waiting.push(acquisition);
  };
  const orders = billing.lock('orders');
  leases.push(await orders.acquire({ leaseMs: 60_000 }));
  wait(worker1.lock('orders').acquire({ waitMs: 60_000 }));
  await waitForQueue(orders.keys.queue, 1);
  wait(worker2.lock('orders').acquire({ waitMs: 60_000 }));
  await waitForQueue(orders.keys.queue, 2);
  leases.push(await worker1.readWriteLock('catalog').read.acquire({ leaseMs: 60_000 }));
  leases.push(await anonymous.readWriteLock('catalog').read.acquire({ leaseMs: 60_000 }));
  const pool = billing.semaphore('pool', { permits: 3 });
  leases.push(await pool.acquire({ permits: 2, leaseMs: 60_000 }));
  wait(worker2.semaphore('pool', { permits: 3 }).acquire({ permits: 2, waitMs: 60_000 }));
  await waitForQueue(pool.keys.queue, 1);
  return {
    clients,
    leases,
    waiting,
    async close() {
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}
