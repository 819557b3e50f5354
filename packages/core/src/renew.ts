import type { Hold } from './hold.js';
import { RedisCommandError, ReplicationError } from './errors.js';
import { callRedis, type CallPolicy } from './redis-call.js';
import { renewReply } from './replies.js';
import type { RenewalResult } from './renewal.js';
import { isCluster, runScript, runScriptReplicated, scripts, type RedisLike, type Replication } from './scripts/index.js';

/** Keys per renew call: keeps each script run short (Redis is single-threaded). */
export const RENEW_CHUNK = 500;

/** What renewal planning needs of a hold. */
export interface Renewable {
  readonly keys: { readonly slot: number };
  readonly leaseMs: number;
}

/**
 * Groups holds into renew calls, as lists of indexes into `holds`: by hash
 * slot on Cluster (a script may only touch one slot), all together on a single
 * server; then by lease length (one lease per call); then into chunks of
 * RENEW_CHUNK.
 */
export function planRenewal(holds: readonly Renewable[], cluster: boolean): number[][] {
  const groups = new Map<string, number[]>();
  holds.forEach((hold, index) => {
    const key = `${cluster ? hold.keys.slot : 0}:${hold.leaseMs}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(index);
  });
  const calls: number[][] = [];
  for (const group of groups.values()) {
    for (let i = 0; i < group.length; i += RENEW_CHUNK) calls.push(group.slice(i, i + RENEW_CHUNK));
  }
  return calls;
}

/**
 * Groups per-slot calls by the primary that serves their slot, so that a tick
 * costs one round trip per node (a pipeline of per-slot scripts) instead of one
 * per slot. Calls whose slot has no known node yet go alone.
 */
export function groupByNode<T>(calls: readonly T[], slotOf: (call: T) => number, nodeOf: (slot: number) => string | undefined): T[][] {
  const byNode = new Map<string, T[]>();
  const alone: T[][] = [];
  for (const call of calls) {
    const node = nodeOf(slotOf(call));
    if (node === undefined) {
      alone.push([call]);
      continue;
    }
    let group = byNode.get(node);
    if (!group) byNode.set(node, (group = []));
    group.push(call);
  }
  return [...byNode.values(), ...alone];
}

type RenewCall = readonly Hold[];

export async function renewHolds(
  redis: RedisLike,
  policy: CallPolicy,
  holds: readonly Hold[],
  replication?: Replication,
): Promise<RenewalResult[]> {
  const results = new Map<Hold, RenewalResult>();
  const settle = (batch: RenewCall, reply: unknown) => {
    renewReply(reply, batch.length).forEach((lost, i) => {
      results.set(batch[i]!, lost === undefined ? { status: 'renewed' } : { status: 'lost', reason: lost });
    });
  };
  const fail = (batch: RenewCall, error: unknown) => {
    for (const hold of batch) results.set(hold, { status: 'failed', error });
  };
  // One attempt: the watchdog's next tick is the retry. WAIT adds its own timeout.
  const once = { retries: 0, commandTimeoutMs: policy.commandTimeoutMs + (replication?.timeoutMs ?? 0) };
  const cluster = isCluster(redis);
  const calls: RenewCall[] = planRenewal(holds, cluster).map((indexes) => indexes.map((i) => holds[i]!));

  const single = async (batch: RenewCall) => {
    const [keys, args] = renewArgs(batch);
    try {
      if (!replication) {
        settle(batch, await callRedis(() => runScript(redis, scripts.renew, keys, args), once));
        return;
      }
      const { reply, acknowledged } = await callRedis(
        () => runScriptReplicated(redis, scripts.renew, keys, args, replication),
        once,
      );
      if (acknowledged < replication.replicas) {
        throw new ReplicationError(undefined, acknowledged, replication.replicas, replication.timeoutMs);
      }
      settle(batch, reply);
    } catch (error) {
      fail(batch, error);
    }
  };
  const pipelined = async (group: RenewCall[]) => {
    const pipeline = redis.pipeline();
    for (const batch of group) {
      const [keys, args] = renewArgs(batch);
      pipeline.evalsha(scripts.renew.sha, keys.length, ...keys, ...args);
    }
    // Acknowledged by the replicas of this node, or not renewed at all.
    if (replication) pipeline.wait(replication.replicas, replication.timeoutMs);
    let replies: [Error | null, unknown][];
    try {
      replies = (await callRedis(async () => (await pipeline.exec()) ?? [], once)) as [Error | null, unknown][];
    } catch (error) {
      for (const batch of group) fail(batch, error);
      return;
    }
    if (replication) {
      const [waitError, acknowledged] = replies[group.length] ?? [null, 0];
      if (waitError || Number(acknowledged) < replication.replicas) {
        const error = waitError
          ? commandError(waitError)
          : new ReplicationError(undefined, Number(acknowledged), replication.replicas, replication.timeoutMs);
        for (const batch of group) fail(batch, error);
        return;
      }
    }
    await Promise.all(
      group.map(async (batch, i) => {
        const [error, reply] = replies[i] ?? [new Error('No reply in the renewal pipeline'), undefined];
        // NOSCRIPT: the node lost its script cache (restart, failover); EVAL once.
        // MOVED/ASK: the slot moved. ioredis follows a redirect (and refreshes
        // its slot map) for a lone command, not inside a mixed pipeline.
        if (error && /^(NOSCRIPT|MOVED|ASK) /.test(error.message)) return single(batch);
        if (error) return fail(batch, commandError(error));
        try {
          settle(batch, reply);
        } catch (decodeError) {
          fail(batch, decodeError); // already a RedisCommandError
        }
      }),
    );
  };

  // Per node on a Cluster; on one server, one pipeline when a WAIT must follow the lot.
  const groups = cluster
    ? groupByNode(calls, (batch) => batch[0]!.keys.slot, (slot) => redis.slots[slot]?.[0])
    : replication ? [calls] : calls.map((call) => [call]);
  await Promise.all(groups.map((group) => (group.length === 1 ? single(group[0]!) : pipelined(group))));
  return holds.map((hold) => results.get(hold)!);
}

/** A per-command error from a pipeline, typed as callRedis types its failures. */
function commandError(error: Error): RedisCommandError {
  return new RedisCommandError(`Redis call failed: ${error.message}`, { cause: error });
}

function renewArgs(batch: RenewCall): [string[], (string | number)[]] {
  return [batch.map((h) => h.keys.lock), [batch[0]!.leaseMs, ...batch.map((h) => h.owner)]];
}
