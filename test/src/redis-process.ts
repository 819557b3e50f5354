import { accessSync, constants, existsSync, statSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';

/** The redis-server binary to spawn: REDIS_SERVER_BIN when set (a name or a path). */
export function redisServerBin(): string {
  if (process.env.REDIS_SERVER_BIN) return process.env.REDIS_SERVER_BIN;
  return existsSync('/usr/bin/redis-server') ? '/usr/bin/redis-server' : 'redis-server';
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The binary resolved to an executable file, or an error that says what to do. Resolved before
 * spawning because a missing binary otherwise surfaces as setpriv's "exited with code 127".
 */
export function resolveRedisServer(): string {
  const bin = redisServerBin();
  const candidates = bin.includes(path.sep)
    ? [bin]
    : (process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, bin));
  const found = candidates.find(isExecutableFile);
  if (found) return found;
  const override = process.env.REDIS_SERVER_BIN ? ` (REDIS_SERVER_BIN=${bin} is not an executable file)` : '';
  throw new Error(
    `redis-server was not found on the PATH: install it (Debian: apt-get install redis-server) or set REDIS_URL${override}. ` +
      'Tests that kill, pause or restart a server always spawn their own redis-server.',
  );
}

export function isRunning(child: ChildProcess | undefined): child is ChildProcess {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

// Children are unref'd so they never hold the worker open, but they must not
// outlive it either (a stray redis-server leaks a port and a temp dir per
// run). Three layers: the kernel's parent-death signal where available (covers
// SIGKILL), termination signals (vitest stops fork workers with SIGTERM, which
// skips 'exit' hooks), and 'exit'. The registry lives on globalThis so
// re-imports of this module (vitest module isolation) share one set and one
// set of hooks per process.
export interface Destroyable {
  destroySync(): void;
}
const LIVE_KEY = Symbol.for('@holdfast/test-utils:live-redis-servers');
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export function liveServers(): Set<Destroyable> {
  const registry = globalThis as typeof globalThis & { [LIVE_KEY]?: Set<Destroyable> };
  let servers = registry[LIVE_KEY];
  if (!servers) {
    const created = new Set<Destroyable>();
    registry[LIVE_KEY] = created;
    installCleanupHooks(created);
    servers = created;
  }
  return servers;
}

function installCleanupHooks(servers: Set<Destroyable>): void {
  const destroyAll = (): void => {
    for (const server of servers) server.destroySync();
    servers.clear();
  };
  process.on('exit', destroyAll);
  for (const signal of SIGNALS) {
    const onSignal = (): void => {
      destroyAll();
      // Having a listener disables Node's default "die on signal". If ours is
      // the only one, restore the default and re-raise so the process still
      // terminates exactly as it would have without us.
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

const SETPRIV = '/usr/bin/setpriv';
let setprivAvailable: boolean | undefined;

/**
 * Wraps the command so Linux SIGKILLs redis-server if its parent dies. Throws, before anything is
 * spawned, when the binary cannot be found (see resolveRedisServer).
 */
export function spawnCommand(args: string[]): [string, string[]] {
  setprivAvailable ??= process.platform === 'linux' && existsSync(SETPRIV);
  const bin = resolveRedisServer();
  // setpriv execs in place, so the child's pid is redis-server's pid.
  return setprivAvailable ? [SETPRIV, ['--pdeathsig', 'KILL', '--', bin, ...args]] : [bin, args];
}
