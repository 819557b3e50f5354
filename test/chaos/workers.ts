import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { clientMode, nodeRedisMajor } from '../src/node-redis-client.mjs';
import { parseLines, type HistoryEvent } from '@holdfast/test-utils/models';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../../packages/watchdog/dist/index.js', import.meta.url));

/** What `worker.mjs` reads from its argument (see its destructuring for defaults). */
export interface WorkerConfig {
  proc: string;
  redisUrl: string;
  resourceUrl: string;
  prefix: string;
  workers?: number;
  sections?: number;
  durationMs?: number;
  locks?: string[];
  leaseMs?: number;
  watchdogMs?: number;
  waitMs?: number;
  holdMs?: [number, number];
  counterSleepMs?: [number, number];
  reentryRate?: number;
  counter?: boolean;
  fenced?: boolean;
  commandTimeoutMs?: number;
  /** ioredis options of the lock client's connection (JSON-serialisable), e.g. `{ maxRetriesPerRequest: null }`. */
  redisOptions?: Record<string, unknown>;
}

export interface WorkerExit {
  proc: string;
  /**
   * The client holdfast ran on in the worker, as it detected it: `ioredis`, or
   * `node-redis 5|6` in the node-redis pass, `glide` in the GLIDE pass (the worker inherits HOLDFAST_CLIENT).
   */
  client: string | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** False when the process had to be killed because it did not exit by itself. */
  exitedByItself: boolean;
  stderr: string;
}

/** Worker processes run the built packages: `pnpm test` and `pnpm chaos` build first. */
export function assertBuilt(): void {
  if (!existsSync(BUILT)) throw new Error('packages are not built: run `pnpm build` before the chaos tests');
}

/** One worker process, streaming its history. */
export class WorkerProcess {
  readonly events: HistoryEvent[] = [];
  readonly exited: Promise<WorkerExit>;
  readonly #child: ChildProcess;
  readonly #listeners = new Set<(event: HistoryEvent) => void>();
  #client: string | undefined;
  #stderr = '';
  #ended = false;

  constructor(readonly config: WorkerConfig) {
    this.#child = spawn(process.execPath, ['--unhandled-rejections=strict', WORKER, JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = createInterface({ input: this.#child.stdout! });
    lines.on('line', (line) => {
      // The worker's first line names its client (see worker.mjs); the rest is history.
      if (line.startsWith('{"client":')) {
        const { client, major } = JSON.parse(line) as { client: string; major?: string };
        this.#client = major ? `${client} ${major}` : client;
        return;
      }
      for (const event of parseLines(line)) {
        this.events.push(event);
        for (const listener of this.#listeners) listener(event);
      }
    });
    this.#child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderr += chunk.toString();
    });
    const closed = new Promise<void>((resolve) => lines.once('close', resolve));
    this.exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => {
        this.#ended = true;
        void closed.then(() =>
          resolve({ proc: config.proc, client: this.#client, code, signal, exitedByItself: signal === null, stderr: this.#stderr }),
        );
      });
    });
  }

  get pid(): number {
    return this.#child.pid!;
  }

  /** Calls `listener` for every event from now on. */
  onEvent(listener: (event: HistoryEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves with the next event matching `predicate`. */
  next(predicate: (event: HistoryEvent) => boolean): Promise<HistoryEvent> {
    return new Promise((resolve) => {
      const off = this.onEvent((event) => {
        if (!predicate(event)) return;
        off();
        resolve(event);
      });
    });
  }

  pause(): void {
    this.#child.kill('SIGSTOP');
  }

  resume(): void {
    this.#child.kill('SIGCONT');
  }

  /**
   * Waits for the process to exit by itself; after `timeoutMs` it is killed
   * and reported as not having exited by itself.
   */
  async finish(timeoutMs: number): Promise<WorkerExit> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
    });
    const outcome = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (outcome !== 'late') return outcome;
    this.kill();
    return { ...(await this.exited), exitedByItself: false };
  }

  kill(): void {
    if (this.#ended) return;
    this.#child.kill('SIGCONT');
    this.#child.kill('SIGKILL');
  }
}

/** The client the pass's workers must report: the one the pass runs holdfast on. */
export const WORKER_CLIENT = clientMode === 'node-redis' ? `node-redis ${nodeRedisMajor}` : clientMode === 'glide' ? 'glide' : 'ioredis';

/** The distinct clients a fleet's workers reported, for a test to compare with `[WORKER_CLIENT]`. */
export function workerClients(exits: readonly WorkerExit[]): (string | undefined)[] {
  return [...new Set(exits.map((exit) => exit.client))];
}

/** True when a worker ended well: exit code 0, by itself, nothing on stderr. */
export function cleanExit(exit: WorkerExit): boolean {
  return exit.code === 0 && exit.exitedByItself && exit.stderr.trim() === '';
}
