import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { RedisPort } from '../port/index.js';
import { ReplicationError } from '../errors/errors.js';
import { callRedis, type CallLimits, type CallPolicy } from '../port/redis-call.js';
import handoff from './_handoff.lua';
import inchunks from './_in-chunks.lua';
import lockhash from './_lock-hash.lua';
import markedset from './_marked-set.lua';
import now from './_now.lua';
import publish from './_publish.lua';
import queueentry from './_queue-entry.lua';
import reneweach from './_renew-each.lua';
import waiterqueue from './_waiter-queue.lua';
import wrongtype from './_wrong-type.lua';

export type { RedisLike } from '../port/redis-like.js';

/**
 * The shared Lua fragments: those two kinds or more include. A fragment only one kind uses lives
 * beside that kind's scripts and is passed to defineScript as its own.
 */
const fragments: Readonly<Record<string, string>> = { handoff, inchunks, lockhash, markedset, now, publish, queueentry, reneweach, waiterqueue, wrongtype };

/** A Lua script sent by SHA, with its source kept for the EVAL fallback after SCRIPT FLUSH. */
export interface Script {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/**
 * A script from its Lua source, with the SHA for EVALSHA. Each `-- @include <fragment>` line is
 * replaced by the fragment of that name: the caller's own first (`own`: the fragments beside the
 * script), then the shared ones of this folder. A fragment may include others; each one is
 * inlined once per script, where it is first included, so two fragments can share a helper
 * without defining it twice. The one resolver of core and Redlock.
 */
export function defineScript(name: string, raw: string, own: Readonly<Record<string, string>> = {}): Script {
  const included = new Set<string>();
  const inline = (text: string): string =>
    text.replace(/^-- @include (\w+)$/gm, (_, fragment: string) => {
      const body = own[fragment] ?? fragments[fragment];
      if (body === undefined) throw new Error(`Unknown Lua fragment ${fragment} in ${name}`);
      if (included.has(fragment)) return `-- ${fragment}: included above`;
      included.add(fragment);
      return inline(body);
    });
  const source = inline(raw);
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * A kind's scripts, one per operation: each source of `sources` under the name `<kind>-<field>`
 * (`forceRelease` → `<kind>-force-release`), with the kind's `own` fragments (see defineScript).
 */
export function defineScripts<N extends string>(
  kind: string,
  sources: Readonly<Record<N, string>>,
  own: Readonly<Record<string, string>> = {},
): Record<N, Script> {
  const scripts = {} as Record<N, Script>;
  for (const field of Object.keys(sources) as N[]) {
    scripts[field] = defineScript(`${kind}-${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, sources[field], own);
  }
  return scripts;
}

/**
 * EVALSHA, falling back to EVAL when the server lost its script cache
 * (SCRIPT FLUSH, restart, failover). One round trip in the common case.
 */
export function runScript(
  redis: RedisPort,
  s: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  let reply: Promise<unknown>;
  try {
    reply = redis.evalsha(s.sha, keys, args);
  } catch (error) {
    // A client that throws instead of rejecting (closed, a bad argument): the same outcome as a rejection.
    return Promise.reject(error);
  }
  return reply.then(undefined, (error: unknown) => {
    if (isNoScript(error)) return redis.eval(s.source, keys, args);
    throw error;
  });
}

/** The server no longer has the script (SCRIPT FLUSH, restart, failover): send it whole. */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** Scripts a client has sent in full at least once (see runScriptReplicated). */
const loadedBy = new WeakMap<RedisPort, Set<string>>();

/** Replica acknowledgements required of a write (`WAIT numreplicas timeout`). */
export interface Replication {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/**
 * A script followed by `WAIT` in one pipeline: one round trip, and the WAIT is
 * sure to run on the connection (and, on a Cluster, the node) that ran the
 * script. Returns the script's reply and how many replicas acknowledged it.
 */
export async function runScriptReplicated(
  redis: RedisPort,
  s: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
  replication: Replication,
): Promise<{ reply: unknown; acknowledged: number }> {
  const run = async (viaSource: boolean) => {
    const script = viaSource ? { kind: 'eval' as const, source: s.source, keys, args } : { kind: 'evalsha' as const, sha: s.sha, keys, args };
    const wait = { kind: 'wait' as const, replicas: replication.replicas, timeoutMs: replication.timeoutMs };
    const [[scriptError, reply] = [null, undefined], [waitError, acknowledged] = [null, 0]] = await redis.pipeline([script, wait], keys[0]);
    return { scriptError, reply, waitError, acknowledged: Number(acknowledged) };
  };
  // A NOSCRIPT answer still waits out the WAIT after it, so the first call of
  // each script through a client goes as EVAL (which also caches it). After a
  // SCRIPT FLUSH, a restart, or on another Cluster node, one call pays twice.
  let sent = loadedBy.get(redis);
  if (!sent) loadedBy.set(redis, (sent = new Set()));
  let result = await run(!sent.has(s.sha));
  if (result.scriptError?.message.startsWith('NOSCRIPT')) result = await run(true);
  if (!result.scriptError) sent.add(s.sha);
  if (result.scriptError) throw result.scriptError;
  if (result.waitError) throw result.waitError;
  return { reply: result.reply, acknowledged: result.acknowledged };
}

/** What `callGranting` needs of a client: its port, its call policy, and its `minReplicas` requirement. */
export interface ScriptCaller {
  readonly redis: RedisPort;
  readonly policy: CallPolicy;
  readonly replication: Replication | undefined;
}

/** How `callGranting` reads a granting call's reply. */
export interface Granting<T> {
  /** The synchronizer a `ReplicationError` names (undefined when one call carries several). */
  readonly name: string | undefined;
  /** The script's reply as the caller uses it; a throw rejects the call. */
  readonly decode: (reply: unknown) => T;
  /**
   * Whether the decoded reply is a write the replicas must acknowledge (a
   * grant, an extension); a refusal wrote nothing and is returned as it is.
   * @default every reply
   */
  readonly granted?: (value: T) => boolean;
  /** The caller's deadline and signal for this call. */
  readonly limits?: CallLimits;
}

/**
 * The granting call every kind makes: the script under the client's call
 * policy, followed by `WAIT` in the same pipeline when the client asks for
 * `minReplicas` (the command timeout then covers the WAIT too), decoded; a
 * grant fewer replicas acknowledged rejects with `ReplicationError` (the
 * write stays on the primary: the caller undoes it if it must).
 */
export async function callGranting<T>(
  caller: ScriptCaller,
  script: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
  granting: Granting<T>,
): Promise<T> {
  const { replication } = caller;
  if (!replication) return granting.decode(await callRedis(() => runScript(caller.redis, script, keys, args), caller.policy, granting.limits));
  const policy = { ...caller.policy, commandTimeoutMs: caller.policy.commandTimeoutMs + replication.timeoutMs };
  const { reply, acknowledged } = await callRedis(() => runScriptReplicated(caller.redis, script, keys, args, replication), policy, granting.limits);
  const decoded = granting.decode(reply);
  if (acknowledged < replication.replicas && (granting.granted?.(decoded) ?? true)) {
    throw new ReplicationError(granting.name, acknowledged, replication.replicas, replication.timeoutMs);
  }
  return decoded;
}

/**
 * How long a request id must be remembered for every resend of its call to
 * be recognised: the call's attempts span at most the caller's deadline, or
 * without one every retry's timeout and back-off (at most 1 s each), plus
 * one command timeout for a resend still in flight.
 */
export function requestIdKeepMs(policy: Pick<CallPolicy, 'commandTimeoutMs' | 'retries'>, deadline: number | undefined): number {
  const { commandTimeoutMs, retries } = policy;
  const span = deadline === undefined ? (retries + 1) * (commandTimeoutMs + 1_000) : Math.max(0, deadline - performance.now());
  return Math.ceil(span) + commandTimeoutMs;
}
