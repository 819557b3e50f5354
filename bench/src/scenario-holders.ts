import type { Redis } from 'ioredis';
import { snapshotClient } from './command-counter.js';
import { fill, HOLD_MS, holdfastClient, HOLDERS_ROWS, type HoldersRow, type Prepared } from './holders-rows.js';
import type { Sizes } from './options.js';
import { RedisServer } from './processes.js';
import { median } from './stats.js';

/**
 * Holders: what one cycle on a name costs Redis when n holders are already on it (n = HOLDER_COUNTS), for
 * holdfast's read-write lock and semaphore beside redis-semaphore's Semaphore and holdfast's mutex
 * (holders-rows.ts).
 */

export const HOLDER_COUNTS: readonly number[] = [0, 100, 1000, 10_000];

/** Cycles of one cell between two snapshots. */
const BLOCK = 100;

/** One row at one n in one round. */
export interface HoldersRound {
  readonly cpuUs: number;
  readonly commandUs: number;
  /** Every command Redis ran per cycle (those inside scripts included). */
  readonly serverCalls: number;
  /** The commands Redis ran, per cycle, by name (those inside scripts included). */
  readonly byName: Record<string, number>;
  /** Seconds it took to put the n holders on the name. */
  readonly fillS: number;
}

export interface HoldersCell {
  readonly n: number;
  readonly rounds: HoldersRound[];
  /** Medians over the rounds. */
  readonly cpuUs: number;
  readonly commandUs: number;
  readonly serverCalls: number;
  /** Over the same row's figure at n = 0 of the same round (median over the rounds): Redis CPU, command time. */
  readonly overN0: Ratios;
  /** Over redis-semaphore's figure at the same n of the same round. */
  readonly overRedisSemaphore: Ratios;
  /** Over holdfast's mutex at the same n of the same round. */
  readonly overMutex: Ratios;
}

export interface Ratios {
  readonly cpu: number;
  readonly command: number;
}

export interface HoldersResult {
  readonly id: string;
  readonly label: string;
  readonly cycle: string;
  readonly cells: HoldersCell[];
}

export interface PurgeRound {
  readonly n: number;
  /** Command time of the write try (EVALSHA usec) that purged the n readers, µs. */
  readonly commandUs: number;
  /** Commands Redis ran for it (inside the script). */
  readonly serverCalls: number;
}

export interface HoldersReport {
  readonly cycles: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly block: number;
  readonly results: HoldersResult[];
  readonly purge: PurgeRound[];
}

interface ServerState {
  readonly cpuUs: number;
  readonly calls: Map<string, number>;
  readonly usec: Map<string, number>;
}

async function serverState(admin: Redis): Promise<ServerState> {
  const text = await admin.info('cpu', 'commandstats');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  const calls = new Map<string, number>();
  const usec = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (m[1] === 'info') continue;
    calls.set(m[1]!, Number(m[2]));
    usec.set(m[1]!, Number(m[3]));
  }
  return { cpuUs: Math.round((field('used_cpu_user') + field('used_cpu_sys')) * 1e6), calls, usec };
}

const delta = (after: Map<string, number>, before: Map<string, number>, name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);

/** One row at one n, filled, with what its blocks added up to. */
interface Cell {
  readonly row: HoldersRow;
  readonly n: number;
  readonly prepared: Prepared;
  readonly fillS: number;
  cycles: number;
  cpuUs: number;
  commandUs: number;
  readonly calls: Map<string, number>;
}

async function block(cell: Cell, admin: Redis, cycles: number): Promise<void> {
  const clientBefore = snapshotClient();
  const before = await serverState(admin);
  for (let i = 0; i < cycles; i++) await cell.prepared.cycle();
  const after = await serverState(admin);
  const sent = snapshotClient();
  // The commands the measured client sent; a script's usec includes what it runs.
  for (const [command, count] of sent.byName) {
    if (count - (clientBefore.byName.get(command) ?? 0) > 0) cell.commandUs += delta(after.usec, before.usec, command);
  }
  for (const command of after.calls.keys()) {
    const d = delta(after.calls, before.calls, command);
    if (d > 0) cell.calls.set(command, (cell.calls.get(command) ?? 0) + d);
  }
  cell.cpuUs += after.cpuUs - before.cpuUs;
  cell.cycles += cycles;
}

function roundOf(cell: Cell): HoldersRound {
  const byName: Record<string, number> = {};
  let serverCalls = 0;
  for (const [command, d] of cell.calls) {
    byName[command] = Math.round((d / cell.cycles) * 100) / 100;
    serverCalls += d;
  }
  return { cpuUs: cell.cpuUs / cell.cycles, commandUs: cell.commandUs / cell.cycles, serverCalls: serverCalls / cell.cycles, byName, fillS: cell.fillS };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * n readers with a lease just long enough to be filled in (the lease is doubled and the fill retried when one
 * ended before the last was taken: a later acquisition would have purged it) and one reader with a long
 * lease, all from a client closed right after (as a crashed process: a client that sees its lease end sends
 * its own release); once the n leases have ended, one write try.
 */
async function measurePurge(server: RedisServer, n: number, round: number): Promise<PurgeRound> {
  for (let lease = 1000 + Math.ceil(n / 4); ; lease *= 2) {
    const name = `p${round}:${n}:${lease}`;
    const holders = holdfastClient(server.port, false);
    const doc = holders.locks.readWriteLock(name);
    try {
      await doc.read.acquire({ leaseMs: HOLD_MS });
      await fill(n, () => doc.read.acquire({ leaseMs: lease }));
    } finally {
      await holders.close();
    }
    const expiry = doc.read.keys.expiry!;
    if ((await server.admin.zcount(expiry, '(0', '+inf')) !== n + 1) continue;
    const ends = Number((await server.admin.zrange(expiry, -2, -2, 'WITHSCORES'))[1]);
    for (;;) {
      const [seconds, micros] = await server.admin.time();
      const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      if (nowMs > ends) break;
      await sleep(ends - nowMs + 5);
    }
    const writer = holdfastClient(server.port, true);
    try {
      const before = await serverState(server.admin);
      if (await writer.locks.readWriteLock(name).write.tryAcquire()) throw new Error('write granted beside a reader');
      const after = await serverState(server.admin);
      if ((await server.admin.zcount(expiry, '(0', '+inf')) !== 1) throw new Error('the write try did not purge the expired readers');
      let serverCalls = 0;
      for (const command of after.calls.keys()) if (command !== 'evalsha' && command !== 'set') serverCalls += delta(after.calls, before.calls, command);
      return { n, commandUs: delta(after.usec, before.usec, 'evalsha'), serverCalls };
    } finally {
      await writer.close();
    }
  }
}

export async function runHolders(sizes: Sizes, log: (line: string) => void, rows: readonly HoldersRow[] = HOLDERS_ROWS): Promise<HoldersReport> {
  const runs = new Map<string, HoldersRound[][]>(rows.map((r) => [r.id, HOLDER_COUNTS.map(() => [])]));
  const purge: PurgeRound[] = [];
  for (let round = 0; round < sizes.holdersRounds; round++) {
    const server = await RedisServer.start();
    const cells: Cell[] = [];
    try {
      for (const n of HOLDER_COUNTS) {
        for (const row of rows) {
          const started = performance.now();
          const prepared = await row.prepare(server.port, `h${round}:${row.id}:${n}`, n);
          cells.push({ row, n, prepared, fillS: (performance.now() - started) / 1000, cycles: 0, cpuUs: 0, commandUs: 0, calls: new Map() });
        }
      }
      log(`  round ${round + 1}: ${cells.length} names filled (${cells.map((c) => c.fillS).reduce((a, b) => a + b, 0).toFixed(1)} s)`);
      for (const cell of cells) for (let i = 0; i < sizes.holdersWarmup; i++) await cell.prepared.cycle();
      for (let pass = 0, done = 0; done < sizes.holdersCycles; pass++, done += BLOCK) {
        for (let j = 0; j < cells.length; j++) await block(cells[(j + pass) % cells.length]!, server.admin, Math.min(BLOCK, sizes.holdersCycles - done));
      }
      for (const cell of cells) {
        const r = roundOf(cell);
        runs.get(cell.row.id)![HOLDER_COUNTS.indexOf(cell.n)]!.push(r);
        log(`  round ${round + 1}, n = ${cell.n}, ${cell.row.label}: Redis CPU ${r.cpuUs.toFixed(1)} µs / cycle, command time ${r.commandUs.toFixed(1)} µs, ${r.serverCalls.toFixed(1)} calls`);
      }
    } finally {
      await Promise.all(cells.map((c) => c.prepared.close()));
    }
    try {
      if (rows.some((r) => r.id === 'holdfast:write-refused')) {
        for (const n of HOLDER_COUNTS.filter((x) => x > 0)) {
          const p = await measurePurge(server, n, round);
          purge.push(p);
          log(`  round ${round + 1}: a write try purging ${n} expired readers: ${p.commandUs} µs, ${(p.commandUs / n).toFixed(2)} µs per reader, ${p.serverCalls} calls`);
        }
      }
    } finally {
      await server.stop();
    }
  }
  const over = (mine: HoldersRound[], other: HoldersRound[] | undefined, pick: (r: HoldersRound) => number) =>
    other?.length ? median(mine.map((r, i) => pick(r) / (other[i] ? pick(other[i]) : Number.NaN))) : Number.NaN;
  const ratios = (mine: HoldersRound[], other: HoldersRound[] | undefined): Ratios => ({ cpu: over(mine, other, (r) => r.cpuUs), command: over(mine, other, (r) => r.commandUs) });
  const results = rows.map((row) => {
    const mine = runs.get(row.id)!;
    return {
      id: row.id,
      label: row.label,
      cycle: row.cycle,
      cells: HOLDER_COUNTS.map((n, k) => ({
        n,
        rounds: mine[k]!,
        cpuUs: median(mine[k]!.map((r) => r.cpuUs)),
        commandUs: median(mine[k]!.map((r) => r.commandUs)),
        serverCalls: median(mine[k]!.map((r) => r.serverCalls)),
        overN0: ratios(mine[k]!, mine[0]),
        overRedisSemaphore: ratios(mine[k]!, runs.get('redis-semaphore:semaphore')?.[k]),
        overMutex: ratios(mine[k]!, runs.get('holdfast:mutex')?.[k]),
      })),
    };
  });
  return { cycles: sizes.holdersCycles, warmup: sizes.holdersWarmup, rounds: sizes.holdersRounds, block: BLOCK, results, purge };
}
