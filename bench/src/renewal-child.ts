import { setTimeout as sleep } from 'node:timers/promises';
import { diffCounts, snapshotClient, toPlain } from './command-counter.js';
import { RENEWAL_LIBRARIES, type Holding } from './renewal-holders.js';
import { installStrayErrorHandlers, strayTotal } from './stray-errors.js';
import { settleHeap } from './heap.js';

/**
 * One library's part of scenario 5, in a fresh process so its RSS and CPU are not mixed with what earlier
 * scenarios left on the heap.
 */

export type ToRenewalChild =
  | { readonly type: 'init'; readonly libId: string; readonly port: number; readonly leases: number; readonly timeoutMs: number }
  | { readonly type: 'measure'; readonly holdMs: number }
  | { readonly type: 'release' };

export type FromRenewalChild =
  | { readonly type: 'held'; readonly acquireMs: number; readonly idleCpuPct: number }
  | {
      readonly type: 'window';
      readonly wallMs: number;
      readonly cpuUs: number;
      readonly rssBaseline: number;
      readonly rssHeld: number;
      readonly heapBaseline: number;
      readonly heapHeld: number;
      readonly lost: number;
      readonly stray: number;
      readonly client: { total: number; byName: Record<string, number> };
    }
  | { readonly type: 'released' }
  | { readonly type: 'failed'; readonly message: string };

installStrayErrorHandlers();

const send = (message: FromRenewalChild) => process.send?.(message);
let holding: Holding | undefined;
const IDLE_MS = 3000;
let rssBaseline = 0;
let heapBaseline = 0;

async function init(libId: string, port: number, leases: number, timeoutMs: number): Promise<void> {
  const lib = RENEWAL_LIBRARIES.find((l) => l.id === libId);
  if (!lib) throw new Error(`Unknown renewal library ${libId}`);
  // One short hold first, so module loading, lazily built tables and the
  // connection setup are not charged to the leases.
  const warm = await lib.hold(port, ['bench-renew-warm'], timeoutMs);
  await warm.releaseAll();
  await warm.close();
  // What this process costs doing nothing (runtime threads, the TypeScript
  // loader, leftovers of the warm-up), so the lease-holding cost can be told apart.
  const idle0 = process.cpuUsage();
  const idleStart = performance.now();
  await sleep(IDLE_MS);
  const idle = process.cpuUsage(idle0);
  const idleCpuPct = ((idle.user + idle.system) / 1000 / (performance.now() - idleStart)) * 100;
  await settleHeap();
  rssBaseline = process.memoryUsage().rss;
  heapBaseline = process.memoryUsage().heapUsed;
  const names = Array.from({ length: leases }, (_, i) => `bench-renew-${i}`);
  const started = performance.now();
  holding = await lib.hold(port, names, timeoutMs);
  const acquireMs = performance.now() - started;
  // The burst of acquisitions leaves garbage and a grown heap.
  await settleHeap();
  send({ type: 'held', acquireMs, idleCpuPct });
}

async function measure(holdMs: number): Promise<void> {
  const client0 = snapshotClient();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(holdMs);
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  const client = toPlain(diffCounts(client0, snapshotClient()));
  await settleHeap();
  const memory = process.memoryUsage();
  send({
    type: 'window',
    wallMs,
    cpuUs: cpu.user + cpu.system,
    rssBaseline,
    rssHeld: memory.rss,
    heapBaseline,
    heapHeld: memory.heapUsed,
    lost: holding!.lost(),
    stray: strayTotal(),
    client,
  });
}

async function release(): Promise<void> {
  await holding!.releaseAll();
  await holding!.close();
  send({ type: 'released' });
  setTimeout(() => process.exit(0), 100);
}

process.on('message', (message: ToRenewalChild) => {
  const task =
    message.type === 'init'
      ? init(message.libId, message.port, message.leases, message.timeoutMs)
      : message.type === 'measure'
        ? measure(message.holdMs)
        : release();
  task.catch((error: unknown) => {
    send({ type: 'failed', message: error instanceof Error ? error.stack ?? error.message : String(error) });
    setTimeout(() => process.exit(1), 100);
  });
});
process.on('disconnect', () => process.exit(0));
