import type { Redis } from 'ioredis';
import { addCounts, describePer, diffCounts, snapshotClient, snapshotServer, type CommandCount } from './command-counter.js';
import type { Locker } from './libraries.js';
import { median, spreadPct, summarize } from './stats.js';

/**
 * Scenario 1 and the uncontended half of scenario 2: one key per library, one client each, acquire + release
 * back to back.
 */

export interface Contender {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  open(): Promise<Locker>;
}

export interface RoundResult {
  readonly p50Us: number;
  readonly p99Us: number;
  /** p50 of this library over p50 of the floor in the same round. */
  readonly ratio: number;
  /** Client process CPU (user + system) per cycle, µs. */
  readonly cpuUs: number;
  /** cpuUs over the floor's in the same round. */
  readonly cpuRatio: number;
}

export interface UncontendedResult {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  readonly rounds: RoundResult[];
  readonly p50Us: number;
  readonly p99Us: number;
  readonly ratio: number;
  /** (max − min) / min of the round medians, %. */
  readonly spreadPct: number;
  readonly clientPerCycle: number;
  readonly serverPerCycle: number;
  /** CPU of the server's main thread per cycle, µs (INFO cpu; scripts and network I/O included). */
  readonly serverUsPerCycle: number;
  /** Client process CPU per cycle, µs (process.cpuUsage over the library's blocks), median over the rounds. */
  readonly cpuUsPerCycle: number;
  /** cpuUsPerCycle over the floor's of the same round, median over the rounds. */
  readonly cpuRatio: number;
  /** (max − min) / min of the rounds' CPU ratios, %. */
  readonly cpuSpreadPct: number;
  readonly clientDetail: string;
  readonly serverDetail: string;
  readonly errors: number;
}

/** Acquire + release `cycles` times; µs per cycle. */
export async function timeCycles(locker: Locker, key: string, cycles: number): Promise<{ us: number[]; errors: number }> {
  const us: number[] = [];
  let errors = 0;
  for (let i = 0; i < cycles; i++) {
    const started = performance.now();
    try {
      const release = await locker.acquire(key);
      await release();
      us.push((performance.now() - started) * 1000);
    } catch {
      errors++;
    }
  }
  return { us, errors };
}

interface Measured {
  cpuUs: number;
  p50Us: number;
  p99Us: number;
  client: CommandCount;
  server: CommandCount;
  cycles: number;
  errors: number;
}

/** Cycles per block: libraries take turns in blocks this size, so drift of the machine hits all of them. */
const BLOCKS = 8;

export async function runUncontended(
  contenders: readonly Contender[],
  admins: readonly Redis[],
  opts: { warmup: number; cycles: number; rounds: number; floorId: string; log: (line: string) => void },
): Promise<UncontendedResult[]> {
  const lockers: Locker[] = [];
  try {
    for (const c of contenders) lockers.push(await c.open());
    const keyOf = (i: number) => `bench-u-${contenders[i]!.id}`;
    for (let i = 0; i < lockers.length; i++) await timeCycles(lockers[i]!, keyOf(i), opts.warmup);
    const blockCycles = Math.max(1, Math.ceil(opts.cycles / BLOCKS));
    const perRound: Map<string, Measured>[] = [];
    for (let r = 0; r < opts.rounds; r++) {
      const samples = contenders.map(() => [] as number[]);
      const client = contenders.map((): CommandCount => ({ total: 0, byName: new Map() }));
      const server = contenders.map((): CommandCount => ({ total: 0, byName: new Map() }));
      const errors = contenders.map(() => 0);
      const cpuUs = contenders.map(() => 0);
      for (let b = 0; b < BLOCKS; b++) {
        for (let k = 0; k < contenders.length; k++) {
          const i = (k + r + b) % contenders.length;
          const client0 = snapshotClient();
          const server0 = await snapshotServer(admins);
          // The whole process: the library, ioredis, timers, GC; the bench's own INFO calls stay outside.
          const cpu0 = process.cpuUsage();
          const block = await timeCycles(lockers[i]!, keyOf(i), blockCycles);
          const cpu = process.cpuUsage(cpu0);
          cpuUs[i]! += cpu.user + cpu.system;
          client[i] = addCounts(client[i]!, diffCounts(client0, snapshotClient()));
          server[i] = addCounts(server[i]!, diffCounts(server0, await snapshotServer(admins)));
          samples[i]!.push(...block.us);
          errors[i]! += block.errors;
        }
      }
      const round = new Map<string, Measured>();
      contenders.forEach((c, i) => {
        const s = summarize(samples[i]!);
        const cycles = blockCycles * BLOCKS;
        const m = { cpuUs: cpuUs[i]! / cycles, p50Us: s.p50, p99Us: s.p99, client: client[i]!, server: server[i]!, cycles, errors: errors[i]! };
        round.set(c.id, m);
        opts.log(
          `  round ${r + 1} ${c.label}: p50 ${m.p50Us.toFixed(0)} µs, p99 ${m.p99Us.toFixed(0)} µs, client CPU ${m.cpuUs.toFixed(1)} µs, ${(m.client.total / m.cycles).toFixed(2)} client cmds`,
        );
      });
      perRound.push(round);
    }
    return summarizeRounds(contenders, perRound, opts.floorId);
  } finally {
    await Promise.all(lockers.map((l) => l.close().catch(() => undefined)));
  }
}

function summarizeRounds(contenders: readonly Contender[], perRound: readonly Map<string, Measured>[], floorId: string): UncontendedResult[] {
  return contenders.map((c) => {
    const rounds = perRound.map((round) => {
      const m = round.get(c.id)!;
      const floorP50 = round.get(floorId)?.p50Us ?? Number.NaN;
      const floorCpu = round.get(floorId)?.cpuUs ?? Number.NaN;
      return { p50Us: m.p50Us, p99Us: m.p99Us, ratio: m.p50Us / floorP50, cpuUs: m.cpuUs, cpuRatio: m.cpuUs / floorCpu };
    });
    const last = perRound[perRound.length - 1]!.get(c.id)!;
    const totalCycles = perRound.reduce((n, round) => n + round.get(c.id)!.cycles, 0);
    const clientTotal = perRound.reduce((n, round) => n + round.get(c.id)!.client.total, 0);
    const serverTotal = perRound.reduce((n, round) => n + round.get(c.id)!.server.total, 0);
    const serverUsec = perRound.reduce((n, round) => n + (round.get(c.id)!.server.usec ?? Number.NaN), 0);
    return {
      id: c.id,
      label: c.label,
      settings: c.settings,
      rounds,
      p50Us: median(rounds.map((r) => r.p50Us)),
      p99Us: median(rounds.map((r) => r.p99Us)),
      ratio: median(rounds.map((r) => r.ratio)),
      spreadPct: spreadPct(rounds.map((r) => r.p50Us)),
      clientPerCycle: clientTotal / totalCycles,
      serverPerCycle: serverTotal / totalCycles,
      serverUsPerCycle: serverUsec / totalCycles,
      cpuUsPerCycle: median(rounds.map((r) => r.cpuUs)),
      cpuRatio: median(rounds.map((r) => r.cpuRatio)),
      cpuSpreadPct: spreadPct(rounds.map((r) => r.cpuRatio)),
      clientDetail: describePer(last.client, last.cycles),
      serverDetail: describePer(last.server, last.cycles),
      errors: perRound.reduce((n, round) => n + round.get(c.id)!.errors, 0),
    };
  });
}
