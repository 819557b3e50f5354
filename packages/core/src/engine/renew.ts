import type { Hold } from './hold.js';
import { RedisCommandError, ReplicationError } from '../errors/errors.js';
import { callRedis, errorText, type CallPolicy } from '../port/redis-call.js';
import { renewReply } from '../scripts/replies.js';
import type { RenewalResult } from '../options/renewal.js';
import type { PipelineReplies, PortCommand, RedisPort } from '../port/index.js';
import { callGranting, type Replication, type Script } from '../scripts/index.js';

/** Keys per renew call: keeps each script run short (Redis is single-threaded). */
export const RENEW_CHUNK = 500;

/** What renewal planning needs of a hold. */
export interface Renewable {
  readonly keys: { readonly slot: number };
  readonly leaseMs: number;
  /** The hold's kind, whose renew script it needs (holds needing different ones go in different calls); default: one script for all. */
  readonly kind?: { readonly renew: Script };
}

/**
 * Groups holds into renew calls, as lists of indexes into `holds`: by renew
 * script; by hash slot on Cluster (a script may only touch one slot), all
 * together on a single server; then by lease length (one lease per call);
 * then into chunks of RENEW_CHUNK.
 */
export function planRenewal(holds: readonly Renewable[], cluster: boolean): number[][] {
  const byScript = new Map<Script | undefined, Map<string | number, number[]>>();
  holds.forEach((hold, index) => {
    const script = hold.kind?.renew;
    let groups = byScript.get(script);
    if (!groups) byScript.set(script, (groups = new Map()));
    const key = cluster ? `${hold.keys.slot}:${hold.leaseMs}` : hold.leaseMs;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(index);
  });
  const calls: number[][] = [];
  for (const groups of byScript.values()) {
    for (const group of groups.values()) {
      for (let i = 0; i < group.length; i += RENEW_CHUNK) calls.push(group.slice(i, i + RENEW_CHUNK));
    }
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

/** A renew call, as indexes into the holds of the tick. */
type RenewCall = readonly number[];

/** Shared by every renewed hold. */
const RENEWED: RenewalResult = Object.freeze({ status: 'renewed' });

export async function renewHolds(
  redis: RedisPort,
  policy: CallPolicy,
  holds: readonly Hold[],
  replication?: Replication,
): Promise<RenewalResult[]> {
  const results = new Array<RenewalResult>(holds.length);
  const settle = (call: RenewCall, reply: unknown) => {
    renewReply(reply, call.length).forEach((lost, i) => {
      results[call[i]!] = lost === undefined ? RENEWED : { status: 'lost', reason: lost };
    });
  };
  const fail = (call: RenewCall, error: unknown) => {
    for (const i of call) results[i] = { status: 'failed', error };
  };
  // One attempt: the watchdog's next tick is the retry. WAIT adds its own timeout.
  const oneAttempt = { retries: 0, commandTimeoutMs: policy.commandTimeoutMs };
  const once = { retries: 0, commandTimeoutMs: policy.commandTimeoutMs + (replication?.timeoutMs ?? 0) };
  const cluster = redis.isCluster;
  const calls: RenewCall[] = planRenewal(holds, cluster);
  const args = (call: RenewCall) => renewArgs(holds, call);
  const scriptOf = (call: RenewCall) => holds[call[0]!]!.kind.renew;

  const single = async (call: RenewCall) => {
    const [keys, argv] = args(call);
    try {
      settle(call, await callGranting({ redis, policy: oneAttempt, replication }, scriptOf(call), keys, argv, { name: undefined, decode: (reply) => reply }));
    } catch (error) {
      fail(call, error);
    }
  };
  const pipelined = async (group: RenewCall[]) => {
    const commands: PortCommand[] = group.map((call) => {
      const [keys, argv] = args(call);
      return { kind: 'evalsha', sha: scriptOf(call).sha, keys, args: argv };
    });
    // Acknowledged by the replicas of this node, or not renewed at all.
    if (replication) commands.push({ kind: 'wait', replicas: replication.replicas, timeoutMs: replication.timeoutMs });
    const routingKey = (commands[0] as { keys?: readonly string[] }).keys?.[0];
    let replies: PipelineReplies;
    try {
      replies = await callRedis(() => redis.pipeline(commands, routingKey), once);
    } catch (error) {
      for (const call of group) fail(call, error);
      return;
    }
    if (replication) {
      const [waitError, acknowledged] = replies[group.length] ?? [null, 0];
      if (waitError || Number(acknowledged) < replication.replicas) {
        const error = waitError
          ? commandError(waitError)
          : new ReplicationError(undefined, Number(acknowledged), replication.replicas, replication.timeoutMs);
        for (const call of group) fail(call, error);
        return;
      }
    }
    await Promise.all(
      group.map(async (call, i) => {
        const [error, reply] = replies[i] ?? [new Error('No reply in the renewal pipeline'), undefined];
        // NOSCRIPT: the node lost its script cache (restart, failover); EVAL once.
        // MOVED/ASK: the slot moved. ioredis follows a redirect (and refreshes
        // its slot map) for a lone command, not inside a mixed pipeline.
        if (error && /^(NOSCRIPT|MOVED|ASK) /.test(error.message)) return single(call);
        if (error) return fail(call, commandError(error));
        try {
          settle(call, reply);
        } catch (decodeError) {
          fail(call, decodeError); // already a RedisCommandError
        }
      }),
    );
  };

  // Per node on a Cluster; on one server, one pipeline when a WAIT must follow the lot.
  const groups = cluster
    ? groupByNode(calls, (call) => holds[call[0]!]!.keys.slot, (slot) => redis.nodeOfSlot(slot))
    : replication ? [calls] : calls.map((call) => [call]);
  await Promise.all(groups.map((group) => (group.length === 1 ? single(group[0]!) : pipelined(group))));
  return results;
}

/** A per-command error from a pipeline, typed as callRedis types its failures. */
function commandError(error: Error): RedisCommandError {
  return new RedisCommandError(`Redis call failed: ${errorText(error)}`, { cause: error });
}

/**
 * KEYS and ARGV of a renew script for one call: per hold the keys its kind
 * names; the owner ids travel as one space-separated argument.
 */
function renewArgs(holds: readonly Hold[], call: RenewCall): [string[], (string | number)[]] {
  const keys: string[] = [];
  const owners = new Array<string>(call.length);
  call.forEach((index, i) => {
    const hold = holds[index]!;
    hold.kind.calls.renewKeys(hold, keys);
    owners[i] = hold.owner;
  });
  return [keys, [holds[call[0]!]!.leaseMs, owners.join(' ')]];
}
