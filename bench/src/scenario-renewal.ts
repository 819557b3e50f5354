import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { diffCounts, describePer, fromPlain, snapshotServer } from './command-counter.js';
import type { Sizes } from './options.js';
import { forkScript, waitExit, type RedisServer } from './processes.js';
import type { FromRenewalChild, ToRenewalChild } from './renewal-child.js';
import type { RenewalLibrary } from './renewal-holders.js';
import { expectChildMessage } from './child-messages.js';

/**
 * Scenario 5: `renewalLeases` leases held with automatic renewal, one library at a time in a fresh child
 * process; measured over `renewalHoldMs` starting `renewalSettleMs` after the last acquisition.
 */

const CHILD = new URL('./renewal-child.ts', import.meta.url);

export interface RenewalResult {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  readonly leases: number;
  readonly acquireMs: number;
  readonly windowMs: number;
  readonly clientPerSec: number;
  readonly serverPerSec: number;
  readonly clientDetail: string;
  readonly serverDetail: string;
  /** Client CPU over the window, % of one core. */
  readonly cpuPct: number;
  /** The same process idle before acquiring (no client, no lease), % of one core. */
  readonly idleCpuPct: number;
  /** Errors the library threw from its own timers in the child. */
  readonly stray: number;
  readonly rssDeltaMb: number;
  readonly heapDeltaMb: number;
  /** Redis memory of the keys per held lock (see keyBytes). */
  readonly bytesPerLock: number;
  /** `used_memory` growth per held lock: also counts connection buffers of the burst of acquisitions. */
  readonly usedMemoryPerLock: number;
  /** Keys that vanished on release: the leases still held at the end of the window. */
  readonly heldAtEnd: number;
  readonly lost: number;
}

function expect<T extends FromRenewalChild['type']>(child: ChildProcess, type: T, ms: number): Promise<Extract<FromRenewalChild, { type: T }>> {
  return expectChildMessage<FromRenewalChild, T>(child, type, ms, 'renewal child');
}

async function usedMemory(server: RedisServer): Promise<number> {
  const text = await server.admin.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

/** Bytes a dict entry and an object header take on 64-bit Redis 7.0; counted by both figures below. */
const ENTRY_AND_HEADER = 24 + 16;

/**
 * What the keys in the server take, from Redis's own accounting: `MEMORY USAGE` of every key (name, value,
 * dict entry, object header), plus the main and expires hash tables (`MEMORY STATS`: bucket arrays and TTL
 * entries), minus the entries and headers both count.
 */
export async function keyBytes(server: RedisServer): Promise<number> {
  const admin = server.admin;
  let total = 0;
  let keys = 0;
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'COUNT', 1000);
    cursor = next;
    if (batch.length === 0) continue;
    const pipeline = admin.pipeline();
    for (const key of batch) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    for (const [error, bytes] of (await pipeline.exec()) ?? []) {
      if (!error && typeof bytes === 'number') {
        total += bytes;
        keys++;
      }
    }
  } while (cursor !== '0');
  const stats = (await admin.call('MEMORY', 'STATS')) as unknown[];
  const db = stats[stats.indexOf('db.0') + 1];
  const field = (name: string) => (Array.isArray(db) ? Number(db[db.indexOf(name) + 1]) : 0);
  return total + field('overhead.hashtable.main') + field('overhead.hashtable.expires') - keys * ENTRY_AND_HEADER;
}

export async function runRenewal(lib: RenewalLibrary, server: RedisServer, sizes: Sizes): Promise<RenewalResult> {
  const admin = server.admin;
  await admin.flushall();
  const memoryBefore = await usedMemory(server);
  const keysBefore = await keyBytes(server);
  const child = forkScript(CHILD);
  const send = (message: ToRenewalChild) => child.connected && child.send(message);
  try {
    const held = expect(child, 'held', 90_000);
    send({ type: 'init', libId: lib.id, port: server.port, leases: sizes.renewalLeases, timeoutMs: sizes.renewalTimeoutMs });
    const { acquireMs, idleCpuPct } = await held;
    const memoryHeld = await usedMemory(server);
    const keysHeldBytes = await keyBytes(server);
    // At least one lease length before measuring: every library has renewed at least once, so its renewal
    // script is in the server's cache (a first renewal of 2000 locks at once would otherwise be 2000 NOSCRIPT
    // + EVAL pairs).
    await sleep(Math.max(sizes.renewalTimeoutMs, sizes.renewalSettleMs));

    const window = expect(child, 'window', sizes.renewalHoldMs + 30_000);
    const server0 = await snapshotServer([admin]);
    const t0 = performance.now();
    send({ type: 'measure', holdMs: sizes.renewalHoldMs });
    const w = await window;
    const serverWindowMs = performance.now() - t0;
    const serverCalls = diffCounts(server0, await snapshotServer([admin]));
    const keysHeld = await admin.dbsize();

    const released = expect(child, 'released', 60_000);
    send({ type: 'release' });
    await released;
    const keysAfter = await admin.dbsize();

    const client = fromPlain(w.client);
    const windowSec = w.wallMs / 1000;
    const MB = 1024 * 1024;
    return {
      id: lib.id,
      label: lib.label,
      settings: lib.settings(sizes.renewalTimeoutMs),
      leases: sizes.renewalLeases,
      acquireMs,
      windowMs: w.wallMs,
      clientPerSec: client.total / windowSec,
      serverPerSec: serverCalls.total / (serverWindowMs / 1000),
      clientDetail: describePer(client, windowSec),
      serverDetail: describePer(serverCalls, serverWindowMs / 1000),
      cpuPct: (w.cpuUs / 1000 / w.wallMs) * 100,
      idleCpuPct,
      stray: w.stray,
      rssDeltaMb: (w.rssHeld - w.rssBaseline) / MB,
      heapDeltaMb: (w.heapHeld - w.heapBaseline) / MB,
      bytesPerLock: (keysHeldBytes - keysBefore) / sizes.renewalLeases,
      usedMemoryPerLock: (memoryHeld - memoryBefore) / sizes.renewalLeases,
      heldAtEnd: keysHeld - keysAfter,
      lost: w.lost,
    };
  } finally {
    await waitExit(child, 5000);
  }
}
