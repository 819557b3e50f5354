import { sleep, type RedisServer } from '@holdfast/test-utils';
import { pauseProcess, type Pausable } from './process-pause.js';
import { jitter, storm, type Nemesis } from './storm.js';

/** One fault as applied: its kind and its monotonic start and end (ns, the histories' clock). */
export interface FaultRecord {
  kind: string;
  detail?: string;
  start: bigint;
  end: bigint;
  ok: boolean;
}

export interface MixedTarget {
  /** The lock server: started with `persistent` (AOF) and `--maxmemory-policy noeviction`. */
  server: RedisServer;
  /** Client processes that may be frozen for a moment. */
  workers: readonly Pausable[];
}

/** How long a frozen worker stays frozen: well under the watchdog's lease (1 s, renewed every 333 ms). */
const WORKER_PAUSE_MS: [number, number] = [50, 250];

/** Runs `run` on a short-lived admin connection that fails fast, never on the clients' own. */
async function admin<T>(server: RedisServer, run: (redis: ReturnType<RedisServer['client']>) => Promise<T>): Promise<T> {
  const redis = server.client({ maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 2_000 });
  redis.on('error', () => {});
  try {
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

const pick = ([min, max]: [number, number]) => min + Math.floor(Math.random() * (max - min + 1));

/**
 * Every fault of the server and connection storms at once, each on a clock of
 * its own so that they overlap at random: redis-server SIGKILL + restart from
 * its AOF, redis-server SIGSTOP/SIGCONT, a worker process SIGSTOP/SIGCONT,
 * `CLIENT KILL TYPE pubsub`, `SCRIPT FLUSH`, and `maxmemory 1` (noeviction)
 * for a moment. Every fault is appended to `log`, so that a flagged history
 * can be read beside what was done to it.
 */
export function mixedStorm(target: MixedTarget, log: FaultRecord[]): Nemesis {
  const { server, workers } = target;
  const logged =
    (kind: string, action: () => Promise<string | void>) =>
    async (): Promise<void> => {
      const start = process.hrtime.bigint();
      let ok = false;
      let detail: string | undefined;
      try {
        detail = (await action()) ?? undefined;
        ok = true;
      } finally {
        log.push({ kind, ...(detail ? { detail } : {}), start, end: process.hrtime.bigint(), ok });
      }
    };
  const storms = [
    storm('redis SIGKILL + restart', jitter(800, 2_000), logged('crash', () => server.restart())),
    storm(
      'redis SIGSTOP',
      jitter(400, 1_200),
      logged('redis-pause', async () => {
        const ms = pick([100, 400]);
        server.pause();
        try {
          await sleep(ms);
        } finally {
          server.resume();
        }
        return `${ms} ms`;
      }),
    ),
    storm(
      'worker SIGSTOP',
      jitter(300, 1_000),
      logged('worker-pause', async () => {
        const index = Math.floor(Math.random() * workers.length);
        const ms = pick(WORKER_PAUSE_MS);
        await pauseProcess(workers[index]!, ms);
        return `p${index} ${ms} ms`;
      }),
    ),
    storm('CLIENT KILL TYPE pubsub', jitter(100, 400), logged('kill-pubsub', () => admin(server, (r) => r.client('KILL', 'TYPE', 'PUBSUB')).then(String))),
    storm('SCRIPT FLUSH', jitter(50, 250), logged('script-flush', () => admin(server, (r) => r.script('FLUSH')).then(() => undefined))),
    storm(
      'maxmemory',
      jitter(1_000, 3_000),
      logged('oom', async () => {
        const ms = pick([100, 400]);
        await admin(server, (r) => r.config('SET', 'maxmemory', '1'));
        try {
          await sleep(ms);
        } finally {
          await restoreMemory(server);
        }
        return `${ms} ms`;
      }),
    ),
  ];
  const stats = { applied: 0, failed: 0 };
  return {
    name: 'mixed',
    get stats() {
      stats.applied = storms.reduce((n, s) => n + s.stats.applied, 0);
      stats.failed = storms.reduce((n, s) => n + s.stats.failed, 0);
      return stats;
    },
    async stop() {
      await Promise.all(storms.map((s) => s.stop()));
      server.resume();
      await restoreMemory(server);
    },
  };
}

/**
 * `maxmemory 0` again. A restart in between forgets the setting anyway (it is
 * not in the AOF); a server frozen at that moment answers after its thaw.
 */
async function restoreMemory(server: RedisServer): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin(server, (r) => r.config('SET', 'maxmemory', '0'));
      return;
    } catch (error) {
      if (attempt >= 10) throw error;
      await sleep(100);
    }
  }
}
