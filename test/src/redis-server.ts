import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis, RedisOptions } from 'ioredis';
import type { RedisBackend } from './backend.js';
import { ClientTracker, withAdminClient } from './redis-client.js';
import { releasePort, reservePort } from './ports.js';
import { fileSize, probeRedis, readLog } from './redis-probe.js';
import { isRunning, liveServers, redisServerBin, spawnCommand } from './redis-process.js';

export interface RedisServer {
  host: string;
  port: number;
  url: string;
  backend: RedisBackend;
  pid: number | undefined;
  client(options?: RedisOptions): Redis;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
  restart(): Promise<void>;
  stop(): Promise<void>;
  flush(): Promise<void>;
}

export interface StartRedisOptions {
  /** AOF with fsync on every write, so a SIGKILL + restart() keeps all data. */
  persistent?: boolean;
  /** Extra redis-server arguments, appended last so they override defaults. */
  args?: string[];
  /**
   * Lines of a config file the server starts from (its first argument).
   * Sentinel needs one: it rewrites it with what it learns.
   */
  configLines?: string[];
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 5000;
const PORT_ATTEMPTS = 5;

class PortInUseError extends Error {}

class SpawnedRedis implements RedisServer {
  readonly host = HOST;
  readonly backend = 'spawn' as const;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;
  private stopped = false;
  private readonly clients: ClientTracker;
  private readonly args: string[];
  private readonly logPath: string;

  constructor(
    readonly port: number,
    private readonly dir: string,
    options: StartRedisOptions,
  ) {
    this.clients = new ClientTracker({ host: HOST, port });
    this.logPath = path.join(dir, 'redis-server.log');
    const persistence = options.persistent
      ? ['--appendonly', 'yes', '--appendfsync', 'always']
      : ['--appendonly', 'no'];
    const config = options.configLines ? [path.join(dir, 'redis.conf')] : [];
    if (options.configLines) writeFileSync(config[0]!, `${options.configLines.join('\n')}\n`);
    this.args = [
      ...config,
      '--save', '',
      ...persistence,
      '--bind', HOST,
      '--port', String(port),
      '--dir', dir,
      '--enable-debug-command', 'local',
      ...(options.args ?? []),
    ];
  }

  get url(): string {
    return `redis://${HOST}:${this.port}`;
  }

  get pid(): number | undefined {
    return isRunning(this.child) ? this.child.pid : undefined;
  }

  client(options?: RedisOptions): Redis {
    return this.clients.create(options);
  }

  async launch(): Promise<void> {
    const logOffset = await fileSize(this.logPath);
    // stdout/stderr go straight to a file: no pipes in this process that would
    // need draining or keep the event loop alive.
    const fd = openSync(this.logPath, 'a');
    let child: ChildProcess;
    try {
      const [command, args] = spawnCommand(this.args);
      child = spawn(command, args, { stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    let spawnError: Error | undefined;
    let hasExited = false;
    child.once('error', (error) => {
      spawnError = error;
      hasExited = true;
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', () => {
        hasExited = true;
        resolve();
      });
    });
    this.child = child;
    this.paused = false;
    child.unref();
    liveServers().add(this);

    const deadline = Date.now() + READY_TIMEOUT_MS;
    let lastError: unknown;
    while (!hasExited && Date.now() < deadline) {
      try {
        const answer = await probeRedis(HOST, this.port);
        if (answer.pid === child.pid) return;
        lastError = new Error(`port ${this.port} is answered by another redis (pid ${answer.pid})`);
      } catch (error) {
        lastError = error;
      }
      await delay(20);
    }

    await this.kill();
    if (spawnError) throw new Error(`could not spawn ${redisServerBin()}: ${spawnError.message}`);
    const log = await readLog(this.logPath, logOffset);
    if (/Address already in use/i.test(log)) {
      throw new PortInUseError(`port ${this.port} already in use`);
    }
    const reason = hasExited
      ? `exited with code ${child.exitCode ?? child.signalCode}`
      : `did not answer PING within ${READY_TIMEOUT_MS} ms (${String(lastError)})`;
    throw new Error(`redis-server on ${HOST}:${this.port} ${reason}\n--- redis-server log ---\n${log}`);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!isRunning(child)) return;
    // Re-ref while waiting: an unref'd child alone would let Node exit with
    // this await still pending.
    child.ref();
    try {
      child.kill('SIGKILL');
      await this.exited;
    } finally {
      child.unref();
      this.paused = false;
    }
  }

  pause(): void {
    const child = this.child;
    if (!isRunning(child)) throw new Error('pause(): redis-server is not running');
    child.kill('SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    const child = this.child;
    if (isRunning(child)) child.kill('SIGCONT');
    this.paused = false;
  }

  async restart(): Promise<void> {
    if (this.stopped) throw new Error('restart(): server was stopped');
    await this.kill();
    // Same port is the point (clients reconnect to it), so instead of picking
    // a new port, wait out a transient holder.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.launch();
        return;
      } catch (error) {
        if (!(error instanceof PortInUseError) || attempt >= 10) throw error;
        await delay(100);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.clients.disconnectAll();
    if (this.paused) this.resume();
    await this.kill();
    liveServers().delete(this);
    releasePort(this.port);
    await rm(this.dir, { recursive: true, force: true });
  }

  async flush(): Promise<void> {
    await withAdminClient({ host: HOST, port: this.port }, (redis) => redis.flushall());
  }

  /** Last-resort cleanup from the process 'exit' hook. */
  destroySync(): void {
    const pid = this.child?.pid;
    if (pid !== undefined && isRunning(this.child)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    releasePort(this.port);
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // best effort: the OS tmp cleaner will get it
    }
  }
}

/** Spawns a private redis-server on a free loopback port and waits for PING. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'holdfast-redis-'));
  for (let attempt = 1; ; attempt++) {
    const server = new SpawnedRedis(await reservePort(HOST), dir, options);
    try {
      await server.launch();
      return server;
    } catch (error) {
      liveServers().delete(server);
      releasePort(server.port);
      if (error instanceof PortInUseError && attempt < PORT_ATTEMPTS) continue;
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }
}

/** Starts n independent servers in parallel (e.g. for multi-node scenarios). */
export async function startRedisServers(n: number, options: StartRedisOptions = {}): Promise<RedisServer[]> {
  const results = await Promise.allSettled(Array.from({ length: n }, () => startRedis(options)));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    // Don't leak the ones that did come up when the caller gets an error.
    await Promise.all(started.map((server) => server.stop()));
    throw failure.reason;
  }
  return started;
}
