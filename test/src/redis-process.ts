import { existsSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

export function redisServerBin(): string {
  if (process.env.REDIS_SERVER_BIN) return process.env.REDIS_SERVER_BIN;
  return existsSync('/usr/bin/redis-server') ? '/usr/bin/redis-server' : 'redis-server';
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

/** Wraps the command so Linux SIGKILLs redis-server if its parent dies. */
export function spawnCommand(args: string[]): [string, string[]] {
  setprivAvailable ??= process.platform === 'linux' && existsSync(SETPRIV);
  // setpriv execs in place, so the child's pid is redis-server's pid.
  return setprivAvailable
    ? [SETPRIV, ['--pdeathsig', 'KILL', '--', redisServerBin(), ...args]]
    : [redisServerBin(), args];
}
