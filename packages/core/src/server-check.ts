import { EvictionPolicyError } from './errors.js';
import type { EvictionCheck } from './options.js';
import { callRedis, type CallPolicy } from './redis-call.js';
import { isCluster, type RedisLike } from './scripts/index.js';

/** One server's memory settings, from `INFO memory` (readable where `CONFIG` is not allowed). */
export interface MemoryPolicy {
  readonly maxmemory: number;
  readonly policy: string;
}

export function parseMemoryInfo(info: string): MemoryPolicy {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  return { maxmemory: Number(field('maxmemory') ?? 0), policy: field('maxmemory_policy') ?? 'noeviction' };
}

/** Keys are only ever evicted with a memory limit and a policy that allows it. */
export function evicts({ maxmemory, policy }: MemoryPolicy): boolean {
  return maxmemory > 0 && policy !== 'noeviction';
}

/**
 * Checks, before the first acquisition and again after each reconnection,
 * that no server behind the client evicts keys. Concurrent acquisitions share
 * one check; once it passed, `ready()` costs nothing until the next
 * reconnection. A check that cannot run (INFO refused, Redis down) lets the
 * acquisition go on (it reports what is wrong itself) and is not retried
 * before the next reconnection. A refusal is checked again every time, so a
 * server fixed meanwhile is accepted at once.
 */
export class EvictionGuard {
  readonly #redis: RedisLike;
  readonly #mode: EvictionCheck;
  readonly #policy: CallPolicy;
  readonly #epoch: () => number;
  readonly #onWarning: (error: EvictionPolicyError) => void;
  #checkedAt = -1;
  #pending: Promise<void> | undefined;
  #warned = false;

  constructor(redis: RedisLike, mode: EvictionCheck, policy: CallPolicy, epoch: () => number, onWarning: (error: EvictionPolicyError) => void) {
    this.#redis = redis;
    this.#mode = mode;
    this.#policy = policy;
    this.#epoch = epoch;
    this.#onWarning = onWarning;
  }

  /** Undefined when nothing needs checking (the common case: no await on the acquire path). */
  ready(): Promise<void> | undefined {
    if (this.#mode === 'off' || this.#checkedAt === this.#epoch()) return undefined;
    this.#pending ??= this.#check().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #check(): Promise<void> {
    const epoch = this.#epoch();
    let found: EvictionPolicyError | undefined;
    try {
      const nodes = isCluster(this.#redis) ? this.#redis.nodes('master') : [this.#redis];
      for (const node of nodes) {
        const info = await callRedis(() => node.info('memory'), this.#policy);
        const memory = parseMemoryInfo(info);
        if (evicts(memory)) {
          const { host, port } = node.options as { host?: string; port?: number };
          found = new EvictionPolicyError(memory.policy, host === undefined ? undefined : `${host}:${String(port)}`);
          break;
        }
      }
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
