import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { FaultProxy, startRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkElection, parseLine, type ElectionEvent } from '@holdfast/test-utils/models';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const TERM_MS = 500;
const FAULT_MS = 2 * TERM_MS;

/** A candidate process (election-worker.mjs) behind its own fault proxy. */
class Candidate {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  constructor(
    readonly proc: string,
    readonly proxy: FaultProxy,
    config: object,
    onEvent: (event: ElectionEvent) => void,
  ) {
    this.child = spawn(process.execPath, [WORKER, JSON.stringify({ ...config, proc, url: proxy.url })], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const event = parseLine(line);
      if (event) onEvent(event);
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }
}

describe('election across processes: crash, freeze, partition, Redis restart', () => {
  let server: RedisServer;
  const candidates: Candidate[] = [];

  beforeAll(async () => {
    server = await startRedis({ persistent: true });
  });
  afterAll(async () => {
    for (const c of candidates) c.child.kill('SIGKILL');
    await Promise.all(candidates.map((c) => c.proxy.close()));
    await server?.stop();
  });

  it('never two leaders that both believe it, epochs increase, every campaign ends, nothing left behind', async () => {
    const prefix = uniqueName('el');
    const name = 'fleet';
    const events: ElectionEvent[] = [];
    let waiting: { test: (e: ElectionEvent) => boolean; resolve: (e: ElectionEvent) => void } | undefined;
    const onEvent = (event: ElectionEvent) => {
      events.push(event);
      if (waiting?.test(event)) {
        const { resolve } = waiting;
        waiting = undefined;
        resolve(event);
      }
    };
    /** The next event matching `test` (from now on). */
    const next = (test: (e: ElectionEvent) => boolean) =>
      new Promise<ElectionEvent>((resolve) => {
        waiting = { test, resolve };
      });
    const config = { prefix, name, termMs: TERM_MS, holdMs: 3 * TERM_MS };
    for (const proc of ['p1', 'p2', 'p3']) {
      const proxy = await FaultProxy.start({ host: '127.0.0.1', port: server.port });
      candidates.push(new Candidate(proc, proxy, config, onEvent));
    }
    const byProc = (proc: string) => candidates.find((c) => c.proc === proc)!;

    // Frozen (SIGSTOP) past its term while leading: the others elect, it learns on resume.
    const frozen = byProc((await next((e) => e.type === 'elected')).proc);
    frozen.child.kill('SIGSTOP');
    await next((e) => e.type === 'elected' && e.proc !== frozen.proc);
    await new Promise((resolve) => setTimeout(resolve, FAULT_MS - TERM_MS));
    frozen.child.kill('SIGCONT');

    // Its connection to Redis dropped while leading: the term is reported lost before it ends.
    const cut = byProc((await next((e) => e.type === 'elected')).proc);
    cut.proxy.blackhole(true);
    const cutLost = await next((e) => e.type === 'lost' && e.proc === cut.proc);
    cut.proxy.blackhole(false);
    cut.proxy.resetAll();
    expect(cutLost.code).toBe('ERR_LEADERSHIP_LOST');

    // Redis killed and restarted from its AOF while someone leads: epochs keep increasing.
    await next((e) => e.type === 'elected');
    await server.restart();

    // The leader killed (-9): the next candidate leads once its term ran out.
    const killed = byProc((await next((e) => e.type === 'elected')).proc);
    killed.child.kill('SIGKILL');
    await killed.exited;
    await next((e) => e.type === 'elected');

    const alive = candidates.filter((c) => c !== killed);
    for (const c of alive) c.child.stdin!.end('stop\n');
    expect(await Promise.all(alive.map((c) => c.exited))).toEqual([0, 0]);

    const check = checkElection(events, new Set([killed.proc]));
    expect(check.overlaps).toEqual([]);
    expect(check.epochInversions).toEqual([]);
    expect(check.unfinished).toEqual([]);
    expect(check.leadAfterLost).toEqual([]);
    expect(check.terms.length).toBeGreaterThanOrEqual(5);
    // The frozen process learnt of its loss, and the cut one too.
    expect(events.some((e) => e.type === 'lost' && e.proc === frozen.proc)).toBe(true);

    // Everyone alive resigned or gave up; what the killed one left runs out by itself.
    const redis = new Redis(server.url);
    try {
      await waitFor(async () => (await redis.keys(`${prefix}:{*}:el?:${name}`)).length === 0, { timeoutMs: 10_000 });
    } finally {
      redis.disconnect();
    }
  });
});
