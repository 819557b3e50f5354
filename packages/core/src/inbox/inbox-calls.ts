import type { RenewOutcome, ClaimEngine } from '../engine/renewed-claim.js';
import { KeyConflictError, RedisCommandError } from '../errors/errors.js';
import { callRedis, type CallLimits } from '../port/redis-call.js';
import { int } from '../scripts/replies.js';
import { callGranting, defineScript, runScript, type ScriptCaller } from '../scripts/index.js';
import claimSource from './inbox-claim.lua';
import indexSource from './inbox-index.lua';
import inspectSource from './inbox-inspect.lua';
import nextSource from './inbox-next.lua';
import postSource from './inbox-post.lua';
import renewSource from './inbox-renew.lua';
import { InboxFullError } from './inbox-errors.js';
import type { InboxKeys } from './inbox-keys.js';
import type { Waiters } from '../engine/waiters.js';
import type { ResolvedClientOptions } from '../options/options.js';

/**
 * What an inbox uses of its client's engine: a renewed claim's view (its
 * processors hold one each) and a script caller's, plus pub/sub wake-ups for
 * `drain`. Members are named as the engine names them.
 */
export interface InboxEngine extends ClaimEngine, ScriptCaller {
  /** The client's options (`prefix`, `leaseMs`, `handoffTimeoutMs`). */
  readonly options: ResolvedClientOptions;
  /** The user client's own key prefix (ioredis `keyPrefix`), which channel names carry. */
  readonly keyPrefix: string;
  /** Pub/sub wake-ups, shared with every kind of the client. */
  readonly waiters: Waiters;
  /** True once the client is closed. */
  isClosed(): boolean;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** The eviction check (and registration) still to be awaited before the first write, if any. */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
}

/** The inbox scripts. */
export const inboxScripts = {
  post: defineScript('inbox-post', postSource),
  next: defineScript('inbox-next', nextSource),
  renew: defineScript('inbox-renew', renewSource),
  claim: defineScript('inbox-claim', claimSource),
  index: defineScript('inbox-index', indexSource),
  inspect: defineScript('inbox-inspect', inspectSource),
} as const;

/** One inbox key, as the calls name it: the inbox, the key, and its Redis names. */
export interface InboxTarget {
  readonly inbox: string;
  readonly key: string;
  readonly keys: InboxKeys;
}

function malformed(script: string, reply: unknown): RedisCommandError {
  return new RedisCommandError(`Unexpected reply to ${script}: ${JSON.stringify(reply)}`);
}

function ints(script: string, reply: unknown): number[] {
  if (!Array.isArray(reply)) throw malformed(script, reply);
  const values = reply.map(int);
  if (values.some((value) => value === undefined)) throw malformed(script, reply);
  return values as number[];
}

function conflict(target: InboxTarget): KeyConflictError {
  return new KeyConflictError(`${target.inbox}:${target.key}`, 'inbox');
}

/** What a post did: the message's place and sequence, and the lease's token when the poster became the processor (else 0). */
export interface PostOutcome {
  readonly position: number;
  readonly seq: number;
  readonly token: number;
}

/**
 * Appends `message` to the key's queue (claiming the key for `owner` when
 * nobody processes it and `owner` is not ''). `InboxFullError` at
 * `maxPending`; `ReplicationError` when too few replicas acknowledged it (the
 * message is stored on the primary then, and will be handled: `stored` has
 * been called with the outcome first, so a claim made is not left unused).
 */
export function postCall(
  engine: InboxEngine,
  target: InboxTarget,
  message: string,
  maxPending: number,
  owner: string,
  leaseMs: number,
  stored: (outcome: PostOutcome) => void,
): Promise<PostOutcome> {
  const { keys } = target;
  return callGranting(engine, inboxScripts.post, [keys.queue, keys.lease, keys.index, keys.fence, keys.attempts], [message, maxPending, owner, leaseMs, target.key], {
    name: `${target.inbox}:${target.key}`,
    decode: (reply) => {
      const r = ints('inbox-post', reply);
      if (r[0] === -3) throw conflict(target);
      if (r[0] === -5 && r.length === 2) throw new InboxFullError(target.inbox, target.key, r[1]!);
      if (r.length !== 3 || r[0]! < 1) throw malformed('inbox-post', reply);
      const outcome = { position: r[0]!, seq: r[1]!, token: r[2]! };
      stored(outcome);
      return outcome;
    },
  });
}

/** One message handed to a processor. `dead`: 0 to handle, 1 past its ttl, 2 past maxAttempts. */
export interface HandedMessage {
  readonly seq: number;
  readonly postedMs: number;
  readonly attempt: number;
  readonly dead: 0 | 1 | 2;
  readonly stored: string;
}

/** What the processor's next call found. */
export type NextOutcome =
  | { readonly kind: 'lost' }
  | { readonly kind: 'released' }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'messages'; readonly serverMs: number; readonly messages: readonly HandedMessage[] };

/** The processor's settings its next call sends. */
export interface NextSettings {
  readonly ttlMs: number;
  readonly maxAttempts: number;
  readonly debounceMs: number;
}

/**
 * Removes the head messages up to `lastSeq` (0: none), then hands up to
 * `most` messages, or releases the key (queue empty, or `most` 0). Only while
 * the lease is `owner`'s with `token`.
 */
export async function nextCall(
  engine: InboxEngine,
  target: InboxTarget,
  owner: string,
  token: number,
  lastSeq: number,
  most: number,
  settings: NextSettings,
  limits?: CallLimits,
): Promise<NextOutcome> {
  const { keys } = target;
  const reply = await callRedis(
    () =>
      runScript(
        engine.redis,
        inboxScripts.next,
        [keys.queue, keys.lease, keys.attempts, keys.index],
        [owner, token, lastSeq, most, settings.ttlMs, settings.maxAttempts, settings.debounceMs, target.key, keys.channel],
      ),
    engine.policy,
    limits,
  );
  return nextReply(reply);
}

function nextReply(reply: unknown): NextOutcome {
  if (!Array.isArray(reply) || reply.length === 0) throw malformed('inbox-next', reply);
  const status = int(reply[0]);
  if (status === -1 && reply.length === 1) return { kind: 'lost' };
  if (status === 0 && reply.length === 1) return { kind: 'released' };
  const second = int(reply[1]);
  if (status === 2 && reply.length === 2 && second !== undefined) return { kind: 'wait', ms: second };
  const count = int(reply[2]);
  if (status !== 1 || second === undefined || count === undefined || reply.length !== 3 + 5 * count) throw malformed('inbox-next', reply);
  const messages: HandedMessage[] = [];
  for (let i = 3; i < reply.length; i += 5) {
    const [seq, postedMs, attempt, dead] = [int(reply[i]), int(reply[i + 1]), int(reply[i + 2]), int(reply[i + 3])];
    const stored: unknown = reply[i + 4];
    const text = typeof stored === 'string' ? stored : Buffer.isBuffer(stored) ? stored.toString('utf8') : undefined;
    if (seq === undefined || postedMs === undefined || attempt === undefined || (dead !== 0 && dead !== 1 && dead !== 2) || text === undefined) {
      throw malformed('inbox-next', reply);
    }
    messages.push({ seq, postedMs, attempt, dead, stored: text });
  }
  return { kind: 'messages', serverMs: second, messages };
}

/** Keeps the processor's lease for at least `leaseMs` from now. */
export function renewCall(engine: InboxEngine, target: InboxTarget, owner: string, token: number, leaseMs: number, limits: CallLimits): Promise<RenewOutcome> {
  const { keys } = target;
  return callGranting(engine, inboxScripts.renew, [keys.lease, keys.index], [owner, token, leaseMs, target.key], {
    name: `${target.inbox}:${target.key}`,
    decode: (reply): RenewOutcome => {
      const code = int(reply);
      if (code === 1) return 'ok';
      if (code === 0) return 'gone';
      if (code === -1 || code === -3) return 'taken';
      throw malformed('inbox-renew', reply);
    },
    granted: (outcome) => outcome === 'ok',
    limits,
  });
}

/**
 * Claims a key with pending messages and no processor: its token, or 0 when
 * it was not free. A claim too few replicas acknowledged is given back at
 * once (its messages left pending) and rejects with `ReplicationError`.
 */
export async function claimCall(engine: InboxEngine, target: InboxTarget, owner: string, leaseMs: number): Promise<number> {
  const { keys } = target;
  let token = 0;
  try {
    return await callGranting(engine, inboxScripts.claim, [keys.queue, keys.lease, keys.index, keys.fence], [owner, leaseMs, target.key], {
      name: `${target.inbox}:${target.key}`,
      decode: (reply) => {
        const r = ints('inbox-claim', reply);
        if (r[0] === -3) throw conflict(target);
        if (r[0] === 0 && r.length === 1) return 0;
        if (r[0] !== 1 || r.length !== 2) throw malformed('inbox-claim', reply);
        return (token = r[1]!);
      },
      granted: (claimed) => claimed > 0,
    });
  } catch (error) {
    if (token > 0) await nextCall(engine, target, owner, token, 0, 0, { ttlMs: 0, maxAttempts: 1, debounceMs: 0 }).catch((e: unknown) => engine.emit('error', e));
    throw error;
  }
}

/**
 * Keys listed by the slots' indexes: `due` those whose lease ended (or that
 * have none), else all; at most `most` per index. One call for all of them on
 * a standalone server, one per index on a Cluster (each in its own slot).
 */
export async function indexCall(engine: InboxEngine, indexes: readonly string[], which: 'due' | 'all', most: number): Promise<string[]> {
  const read = async (keys: readonly string[]): Promise<string[]> => {
    const reply = await callRedis(() => runScript(engine.redis, inboxScripts.index, keys, [which, most]), engine.policy);
    if (!Array.isArray(reply)) throw malformed('inbox-index', reply);
    if (reply.length === 1 && int(reply[0]) === -3) throw new KeyConflictError(keys.length === 1 ? keys[0]! : 'index', 'inbox');
    return reply.map((member: unknown) => (Buffer.isBuffer(member) ? member.toString('utf8') : String(member)));
  };
  if (!engine.redis.isCluster) return read(indexes);
  return (await Promise.all(indexes.map((index) => read([index])))).flat();
}

/** A key's queue and processor, read at one instant of the server's. */
export interface InboxKeyState {
  readonly pending: number;
  readonly headSeq: number;
  readonly tailSeq: number;
  readonly headPostedMs: number;
  readonly serverMs: number;
  /** The processor's token, 0 when none. */
  readonly token: number;
  /** The processor's lease time left, in ms (-2 when none). */
  readonly leaseTtlMs: number;
}

/** Reads a key's state. */
export async function inspectCall(engine: InboxEngine, target: InboxTarget, limits?: CallLimits): Promise<InboxKeyState> {
  const { keys } = target;
  const reply = await callRedis(() => runScript(engine.redis, inboxScripts.inspect, [keys.queue, keys.lease, keys.attempts], []), engine.policy, limits);
  const r = ints('inbox-inspect', reply);
  if (r[0] === -3) throw conflict(target);
  if (r.length !== 7) throw malformed('inbox-inspect', reply);
  const [pending, headSeq, tailSeq, headPostedMs, serverMs, token, leaseTtlMs] = r as [number, number, number, number, number, number, number];
  return { pending, headSeq, tailSeq, headPostedMs, serverMs, token, leaseTtlMs };
}
