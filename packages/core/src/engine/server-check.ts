import { performance } from 'node:perf_hooks';
import { EvictionPolicyError, LockTimeoutError, RedisTimeoutError } from '../errors/errors.js';
import type { EvictionCheck } from '../options/options.js';
import { callRedis, withTimeout, type CallPolicy } from '../port/redis-call.js';
import type { RedisPort } from '../port/index.js';

/** What one server says of itself in `INFO` (readable where `CONFIG` is not allowed). */
export interface ServerInfo {
  /** `run_id`: random per server process, so two clients that report the same one reach one server. */
  readonly runId: string | undefined;
  readonly maxmemory: number;
  readonly policy: string;
}

export function parseServerInfo(info: string): ServerInfo {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  return {
    runId: field('run_id') || undefined,
    maxmemory: Number(field('maxmemory') ?? 0),
    policy: field('maxmemory_policy') ?? 'noeviction',
  };
}

/** Keys are only ever evicted with a memory limit and a policy that allows it. */
export function evicts({ maxmemory, policy }: ServerInfo): boolean {
  return maxmemory > 0 && policy !== 'noeviction';
}

/**
 * Reads, before the first acquisition and again after each reconnection,
 * what the servers behind a client say of themselves (`INFO`): whether one
 * evicts keys (see `evictionCheck`), and their `run_id`s (Redlock refuses two
 * instances that are one server). Concurrent acquisitions share
 * one check; once it passed, `ready()` costs nothing until the next
 * reconnection. A check that cannot run (INFO refused, Redis down) lets the
 * acquisition go on (it reports what is wrong itself) and is not retried
 * before the next reconnection. A refusal is checked again every time, so a
 * server fixed meanwhile is accepted at once.
 */
export class ServerCheck {
  readonly #redis: RedisPort;
  readonly #mode: EvictionCheck;
  readonly #policy: CallPolicy;
  readonly #epoch: () => number;
  readonly #onWarning: (error: EvictionPolicyError) => void;
  #checkedAt = -1;
  #pending: Promise<void> | undefined;
  #warned = false;
  /** The `run_id` of every server behind the client, as last read (empty until then). */
  runIds: readonly string[] = [];

  readonly #wantsRunIds: boolean;

  /** `wantsRunIds`: read `run_id`s even with `evictionCheck: 'off'` (Redlock). */
  constructor(
    redis: RedisPort,
    mode: EvictionCheck,
    policy: CallPolicy,
    epoch: () => number,
    onWarning: (error: EvictionPolicyError) => void,
    wantsRunIds = false,
  ) {
    this.#wantsRunIds = wantsRunIds;
    this.#redis = redis;
    this.#mode = mode;
    this.#policy = policy;
    this.#epoch = epoch;
    this.#onWarning = onWarning;
  }

  /** Undefined when nothing needs checking (the common case: no await on the acquire path). */
  ready(): Promise<void> | undefined {
    if ((this.#mode === 'off' && !this.#wantsRunIds) || this.#checkedAt === this.#epoch()) return undefined;
    this.#pending ??= this.#check().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #check(): Promise<void> {
    const epoch = this.#epoch();
    let found: EvictionPolicyError | undefined;
    try {
      // A fresh Cluster client learns its primaries when it is ready. Only an
      // attempt under way is waited for: between attempts (`reconnecting`),
      // after giving up (`end`) or before the first (`wait`, lazyConnect) no
      // `ready` or `close` may come within the timeout, and the acquisition
      // itself reports what is wrong.
      if (this.#redis.isCluster && (this.#redis.status() === 'connecting' || this.#redis.status() === 'connect')) {
        await readyOrClosed(this.#redis, this.#policy.commandTimeoutMs);
      }
      const nodes = this.#redis.primaries();
      // Still none known (no node reachable): look again next time.
      if (nodes.length === 0) return;
      const runIds: string[] = [];
      for (const node of nodes) {
        // The default sections hold both `server` and `memory` (Redis 6.2 takes one section name only).
        const info = parseServerInfo(await callRedis(() => node.info(), this.#policy));
        if (info.runId) runIds.push(info.runId);
        if (!found && this.#mode !== 'off' && evicts(info)) {
          found = new EvictionPolicyError(info.policy, node.address);
        }
      }
      this.runIds = runIds;
    } catch {
      // Not checkable on this connection (INFO refused, server down): the
      // acquisition reports a failure itself; checked again after a reconnection.
      this.#checkedAt = epoch;
      return;
    }
    this.#checkedAt = epoch;
    if (!found) return;
    if (this.#mode === 'refuse') {
      this.#checkedAt = -1;
      throw found;
    }
    if (!this.#warned) {
      this.#warned = true;
      this.#onWarning(found);
    }
  }
}

/**
 * What a wait makes of its share of the server check failing
 * (`Engine.serverReady(deadline, signal)`, for every kind's wait): the
 * check not answered by the caller's deadline is the caller's timeout, a
 * LockTimeoutError for `name` with the time waited since `started` (read
 * now, as it rejects); anything else (the signal's reason, a refusal) as it
 * is. Nothing was sent for the wait yet, so nothing is left to undo.
 */
export function serverCheckFailure(name: string, started: number, deadline: number | undefined): (error: unknown) => never {
  return (error: unknown) => {
    const now = performance.now();
    if (error instanceof RedisTimeoutError && deadline !== undefined && now >= deadline) {
      throw new LockTimeoutError(name, Math.round(now - started), { cause: error });
    }
    throw error;
  };
}

/** Resolves when `redis` is ready or its connection attempt failed, or after `timeoutMs`. */
async function readyOrClosed(redis: RedisPort, timeoutMs: number): Promise<void> {
  let done: (() => void) | undefined;
  try {
    await withTimeout(
      new Promise<void>((resolve) => {
        done = resolve;
        redis.on('ready', resolve);
        redis.on('close', resolve);
      }),
      timeoutMs,
    );
  } catch {
    // Timed out: the caller goes on with what it has.
  } finally {
    if (done) {
      redis.off('ready', done);
      redis.off('close', done);
    }
  }
}
