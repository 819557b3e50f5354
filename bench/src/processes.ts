import { spawn, fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import { uncounted } from './command-counter.js';

/**
 * Every child this bench starts (redis-server, forked workers) is registered here and killed when the bench
 * exits, however it exits, so no server is left listening after a crash or Ctrl-C.
 */
const children = new Set<ChildProcess>();

function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping redis-server and worker processes`);
    killAll();
    process.exit(130);
  });
}

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

const REDIS_SERVER = '/usr/bin/redis-server';
// The system Redis may listen there; this bench must never talk to it.
const RESERVED_PORTS = new Set([6379, 6380, 26379]);

async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (port > 0 && !RESERVED_PORTS.has(port)) return port;
  }
}

/** A redis-server of our own on a free loopback port, with an uncounted admin connection. */
export class RedisServer {
  readonly port: number;
  readonly admin: Redis;
  readonly #process: ChildProcess;

  private constructor(port: number, child: ChildProcess, admin: Redis) {
    this.port = port;
    this.#process = child;
    this.admin = admin;
  }

  /**
   * `under`: a command the server runs inside (valgrind and its options); `args`: more server options; `env`:
   * added to its environment; `startMs`: how long it may take to answer.
   */
  static async start(
    opts: { under?: readonly string[]; args?: readonly string[]; env?: Record<string, string>; startMs?: number } = {},
  ): Promise<RedisServer> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort();
      const argv = [REDIS_SERVER, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(opts.args ?? [])];
      const [command, ...rest] = [...(opts.under ?? []), ...argv];
      const env = opts.env ? { ...process.env, ...opts.env } : process.env;
      const child = track(spawn(command!, rest, { stdio: ['ignore', 'ignore', 'pipe'], env }));
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      try {
        const admin = await connectWhenUp(port, child, opts.startMs ?? 10_000);
        return new RedisServer(port, child, admin);
      } catch (error) {
        child.kill('SIGKILL');
        lastError = new Error(`redis-server on ${port} did not start: ${String(error)} ${stderr.trim()}`);
      }
    }
    throw lastError;
  }

  static startMany(count: number): Promise<RedisServer[]> {
    return Promise.all(Array.from({ length: count }, () => RedisServer.start()));
  }

  /** Process id of the server (of valgrind, when it runs under it: the same process). */
  get pid(): number | undefined {
    return this.#process.pid;
  }

  get alive(): boolean {
    return this.#process.exitCode === null && this.#process.signalCode === null;
  }

  /** SIGKILL, as a crashed or partitioned instance would look to clients. */
  crash(): void {
    this.admin.disconnect();
    this.#process.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    this.admin.disconnect();
    if (!this.alive) return;
    const exited = new Promise<void>((resolve) => this.#process.once('exit', () => resolve()));
    this.#process.kill('SIGTERM');
    await Promise.race([exited, sleep(3000)]);
    if (this.alive) this.#process.kill('SIGKILL');
  }
}

async function connectWhenUp(port: number, child: ChildProcess, startMs: number): Promise<Redis> {
  const deadline = Date.now() + startMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    const admin = uncounted(
      new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null }),
    );
    admin.on('error', () => undefined);
    try {
      await admin.connect();
      await admin.ping();
      return admin;
    } catch {
      admin.disconnect();
      await sleep(50);
    }
  }
  throw new Error('timed out');
}

let connectOptions: RedisOptions = {};

/**
 * Options every later `connect` of this process adds to ioredis's defaults: the saturation scenario's client
 * processes turn on auto-pipelining there.
 */
export function setConnectOptions(options: RedisOptions): void {
  connectOptions = options;
}

/** ioredis with its defaults, pointed at one of our servers. */
export function connect(port: number): Redis {
  const redis = new Redis({ ...connectOptions, host: '127.0.0.1', port });
  redis.on('error', () => undefined);
  return redis;
}

/** Forks a bench script under tsx, with the same flags as this process. */
export function forkScript(file: URL): ChildProcess {
  const tsx = import.meta.resolve('tsx');
  return track(
    fork(file, [], {
      execArgv: ['--expose-gc', '--import', tsx],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    }),
  );
}

/** Waits for a forked child to exit; kills it after `ms`. */
export async function waitExit(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([exited, sleep(ms)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
