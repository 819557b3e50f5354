import { InvalidArgumentError } from '../errors/errors.js';
import { bunErrors, mapBunError } from './bun-errors.js';
import { bunSubscriber } from './bun-subscriber.js';
import { callEvents } from './call-events.js';
import type { PipelineReplies, PortCommand, PortNode, PortStatus, RedisPort } from './port.js';
import type { BunRedisClientLike } from './redis-like.js';

/**
 * The port over Bun's built-in client (`RedisClient` from `bun`, Bun 1.2 and
 * later): with bun-subscriber.ts and bun-errors.ts, the only code that knows
 * its API. Every command goes through `send(command, args)` with string
 * arguments; replies come as RESP3 gives them (integers as numbers, nil as
 * null), which core decodes as it does every client's. Commands sent in one
 * tick leave in one write on Bun's one connection (its auto-pipelining), so a
 * pipeline is those commands sent together, each with its own outcome, and a
 * `WAIT` among them counts the writes of that connection.
 *
 * What Bun's client does not give, and what holdfast does instead:
 * - No command timeout: a call to a server that stopped answering stays
 *   pending. Every call of core runs under its own `commandTimeoutMs`
 *   (redis-call.ts), which bounds it all the same.
 * - A command that was on a lost connection fails (`ERR_REDIS_CONNECTION_CLOSED`)
 *   and is not resent: a connection failure, retried by core with the same
 *   request id, which keeps a repeated acquire or release exact.
 * - No connection events holdfast can listen to (`onconnect`/`onclose` are one
 *   slot each, the application's): the port reports them from the calls
 *   (call-events.ts), as for GLIDE.
 * - No Cluster and no Sentinel: the client shows no options to tell (no URL,
 *   no host), so the first call of the port asks the server (`INFO server`)
 *   and, on a Cluster node or a Sentinel, refuses that call and every later
 *   one with InvalidArgumentError naming the gap; a `MOVED` or `ASK` reply
 *   (INFO refused by an ACL) is refused the same way.
 * - No sharded pub/sub, and subscriptions are not restored after a
 *   reconnection: see bun-subscriber.ts.
 */

/** True for Bun's `RedisClient` (by its members; no other client has `send`, `bufferedAmount` and a boolean `connected`). */
export function isBunRedis(client: object): boolean {
  const c = client as Record<string, unknown>;
  return typeof c.send === 'function' && typeof c.duplicate === 'function' && typeof c.connected === 'boolean' && typeof c.bufferedAmount === 'number';
}

const str = (values: readonly (string | number)[]): string[] => values.map(String);

/** A command of core as Bun's `send` takes it: the name, then its arguments. */
function commandOf(command: PortCommand): [string, string[]] {
  if (command.kind === 'wait') return ['WAIT', [String(command.replicas), String(command.timeoutMs)]];
  const head = command.kind === 'eval' ? command.source : command.sha;
  return [command.kind === 'eval' ? 'EVAL' : 'EVALSHA', [head, String(command.keys.length), ...command.keys, ...str(command.args)]];
}

/** Where a server that is not standalone says so in `INFO server` (`server_mode` on Valkey). */
const MODE = /^(?:redis|server)_mode:(\w+)/m;
/** A Cluster node's redirection: the server is a Cluster node, whatever INFO said. */
const REDIRECTED = /^(MOVED|ASK) /;

function refusal(mode: string): InvalidArgumentError {
  const what = mode === 'sentinel' ? 'a Redis Sentinel' : 'a Redis Cluster node';
  return new InvalidArgumentError(
    `Expected a Bun RedisClient connected to a standalone Redis server (Bun's client has no Cluster or Sentinel support: no slot routing, no failover), got one connected to ${what} (redis_mode:${mode})`,
  );
}

/** Wraps Bun's `RedisClient`; the application's client is never closed or reconnected by holdfast. */
export function bunPort(client: object): RedisPort {
  const bun = client as BunRedisClientLike;
  const events = callEvents(bunErrors.isConnectionFailure);
  const failed = (error: unknown): Promise<never> => {
    let out = mapBunError(error);
    if (out instanceof Error && bunErrors.isReply(out) && REDIRECTED.test(out.message)) out = refusal('cluster');
    events.failed(out);
    return Promise.reject(out);
  };
  const answered = <T>(reply: T): T => {
    events.answered();
    return reply;
  };
  const raw = (command: string, args: string[]): Promise<unknown> => bun.send(command, args).then(answered, failed);

  // The deployment, checked once by the first call (again after a check that could not be made).
  let verified = false;
  let refused: InvalidArgumentError | undefined;
  let checking: Promise<void> | undefined;
  const check = (): Promise<void> | undefined => {
    if (verified) return undefined;
    if (refused) return Promise.reject(refused);
    checking ??= raw('INFO', ['server']).then(
      (info) => {
        checking = undefined;
        const mode = MODE.exec(String(info))?.[1];
        if (mode === 'cluster' || mode === 'sentinel') throw (refused = refusal(mode));
        verified = true;
      },
      (error: unknown) => {
        checking = undefined;
        // INFO refused (an ACL): a Cluster node still shows itself by MOVED.
        if (error instanceof Error && bunErrors.isReply(error)) verified = true;
        else throw error;
      },
    );
    return checking;
  };
  const send = (command: string, args: string[]): Promise<unknown> => {
    const first = check();
    return first ? first.then(() => raw(command, args)) : raw(command, args);
  };
  const pipeline = async (commands: readonly PortCommand[]): Promise<PipelineReplies> => {
    await check();
    // Sent in one tick: one write, in order, on the one connection.
    const outcomes = await Promise.allSettled(commands.map((command) => raw(...commandOf(command))));
    return outcomes.map((o): [Error | null, unknown] =>
      o.status === 'fulfilled' ? [null, o.value] : [o.reason instanceof Error ? o.reason : new Error(String(o.reason)), undefined],
    );
  };

  return {
    kind: 'bun',
    client,
    isCluster: false,
    keyPrefix: '',
    // Bun's client shows neither its URL nor its database.
    endpoint: undefined,
    // Bun's `enableOfflineQueue` (true by default) cannot be read back.
    offlineQueue: true,
    // Bun keeps a call while it connects or reconnects (its offline queue): `ready` until a call
    // found the client closed or given up (`end`), as for GLIDE; the next reply makes it `ready` again.
    status: (): PortStatus => (events.ended() && !bun.connected ? 'end' : 'ready'),
    connect: () => undefined,
    evalsha: (sha, keys, args) => send('EVALSHA', [sha, String(keys.length), ...keys, ...str(args)]),
    eval: (source, keys, args) => send('EVAL', [source, String(keys.length), ...keys, ...str(args)]),
    pipeline,
    hmget: (key, fields) => send('HMGET', [key, ...fields]) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send('SET', [key, value, 'EX', String(seconds)]),
    del: (key) => send('DEL', [key]),
    nodeOfSlot: () => undefined,
    primaries: (): PortNode[] => [{ address: undefined, info: () => send('INFO', []) as Promise<string> }],
    on: events.on,
    off: events.off,
    subscriber: (handlers) => bunSubscriber(bun, handlers),
  };
}
