import { performance } from 'node:perf_hooks';
import { InvalidArgumentError, RedisCommandError } from '../errors/errors.js';
import { glideErrors, mapGlideError } from './glide-errors.js';
import { glideSubscriber } from './glide-subscriber.js';
import type { GlideBatchClass, GlideClientLike, GlideRoute } from './glide-types.js';
import { commandArgs, type PipelineReplies, type PortCommand, type PortEvent, type PortNode, type PortStatus, type RedisPort } from './port.js';
import { callEvents } from './call-events.js';

/**
 * The port over a Valkey GLIDE 2.x client (`GlideClient`, `GlideClusterClient`):
 * with glide-subscriber.ts and glide-errors.ts, the only code that knows
 * GLIDE's API. Every command goes through `customCommand` with string
 * arguments and the String decoder. Scripts go by `EVALSHA` with core's EVAL
 * fallback, not `invokeScript`: core owns each script's SHA and source, and a
 * pipeline must carry the EVALSHA and its `WAIT` in one batch on one
 * connection, which `invokeScript` cannot join.
 *
 * What GLIDE does not give, and what the port does instead:
 * - No connection events. GLIDE reconnects by itself and says nothing; a
 *   request that was on a lost connection fails with `ConnectionError` (never
 *   resent). The port reports `close` when a call fails so, and `ready` at the
 *   next reply: the reconnection count core keeps counts the losses a call
 *   met. A loss no call met goes unseen (the server check reruns after a
 *   counted loss only).
 * - No status: `ready` until the application closes the client, or a call
 *   meets it closed (`end`: GLIDE's `ClosingError`, also when its first
 *   connection failed); a Cluster is `connecting` until its slot map was
 *   first read.
 * - GLIDE's `requestTimeout` (250 ms by default) fails a request that waited
 *   longer (`TimeoutError`, which the port reports as RedisTimeoutError, as
 *   holdfast's own `commandTimeoutMs`), and the request may still run at the
 *   server afterwards. Core treats it as any call it stopped waiting for: the
 *   request id it sent makes a late run of an acquire or a release exact
 *   (a late acquire is released by it, a resent release is a no-op).
 * - `WAIT` in a batch would be cut at `requestTimeout`: a pipeline with a
 *   `WAIT` gets its own batch timeout, the WAIT's plus `requestTimeout`.
 */

/** GLIDE's `Decoder.String`: replies as strings, whatever the client's `defaultDecoder`. */
const STRING_DECODER = 1;
/** GLIDE's default `requestTimeout`. */
const DEFAULT_REQUEST_TIMEOUT_MS = 250;
/** GLIDE's `ProtocolVersion.RESP2`. */
const RESP2 = 1;
/** How old a Cluster's slot map may be before nodeOfSlot() asks for a fresh one. */
const SLOT_MAP_MAX_AGE_MS = 1_000;

/** True for a GLIDE client or Cluster client (by the members holdfast uses; ioredis and node-redis have no `customCommand`). */
export function isGlide(client: object): boolean {
  const c = client as Record<string, unknown>;
  return typeof c.customCommand === 'function' && typeof c.exec === 'function' && typeof c.invokeScript === 'function';
}


/** GLIDE's batch classes, from the package the application installed (a peer dependency), loaded once. */
let batchClasses: Promise<{ Batch: GlideBatchClass; ClusterBatch: GlideBatchClass }> | undefined;
const GLIDE_PACKAGE = '@valkey/valkey-glide';
function loadBatches(): Promise<{ Batch: GlideBatchClass; ClusterBatch: GlideBatchClass }> {
  batchClasses ??= (import(GLIDE_PACKAGE) as Promise<{ Batch: GlideBatchClass; ClusterBatch: GlideBatchClass }>).catch((error: unknown) => {
    batchClasses = undefined;
    throw new RedisCommandError(`${GLIDE_PACKAGE} could not be imported next to @holdfast/core (a GLIDE pipeline needs its Batch class)`, { cause: error });
  });
  return batchClasses;
}

/** Wraps a GLIDE client or Cluster client; InvalidArgumentError for one holdfast cannot run on. */
export function glidePort(client: object): RedisPort {
  const glide = client as GlideClientLike;
  const config = glide.config ?? {};
  if (typeof glide.subscribe !== 'function') {
    throw new InvalidArgumentError('Expected a GLIDE client of 2.3 or later (dynamic `subscribe`, which holdfast waits with), got one without `subscribe`');
  }
  if (config.protocol === RESP2) {
    throw new InvalidArgumentError('Expected a GLIDE client speaking RESP3 (GLIDE subscribes only over RESP3), got `protocol: ProtocolVersion.RESP2`');
  }
  const cluster = typeof glide.ssubscribe === 'function';
  const requestTimeoutMs = glide.requestTimeout ?? config.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const events = callEvents(glideErrors.isConnectionFailure);
  const mapped = (error: unknown) => {
    const out = mapGlideError(error, requestTimeoutMs);
    events.failed(out);
    return Promise.reject(out);
  };
  const send = (args: string[], route?: GlideRoute): Promise<unknown> =>
    glide.customCommand(args, route === undefined || !cluster ? { decoder: STRING_DECODER } : { route, decoder: STRING_DECODER }).then((reply) => {
      events.answered();
      return reply;
    }, mapped);
  const keyed = (key: string | undefined): GlideRoute | undefined => (key === undefined ? undefined : { type: 'primarySlotKey', key });
  const slots = cluster ? slotMap(send, events.emit) : undefined;

  const pipeline = async (commands: readonly PortCommand[], routingKey: string | undefined): Promise<PipelineReplies> => {
    const classes = await loadBatches();
    const batch = new (cluster ? classes.ClusterBatch : classes.Batch)(false);
    let waitMs = 0;
    for (const command of commands) {
      batch.customCommand(commandArgs(command));
      if (command.kind === 'wait') waitMs = Math.max(waitMs, command.timeoutMs);
    }
    const route = cluster ? keyed(routingKey) : undefined;
    const options = { decoder: STRING_DECODER, ...(waitMs > 0 ? { timeout: waitMs + requestTimeoutMs } : {}), ...(route ? { route } : {}) };
    const out = await glide.exec(batch, false, options).then((reply) => reply, mapped);
    events.answered();
    return commands.map((_, i): [Error | null, unknown] => {
      const reply = out?.[i];
      if (reply instanceof Error) return [mapGlideError(reply, requestTimeoutMs) as Error, undefined];
      return [null, reply];
    });
  };

  const address = config.addresses?.[0];
  const where = address ? `${address.host ?? 'localhost'}:${address.port ?? 6379}` : undefined;
  return {
    kind: 'glide',
    client,
    isCluster: cluster,
    keyPrefix: '',
    endpoint: cluster || where === undefined ? undefined : `${where}/${String(config.databaseId ?? 0)}`,
    // GLIDE keeps a request while it reconnects, up to its requestTimeout; it has no option to fail at once.
    offlineQueue: true,
    status: (): PortStatus => {
      // `ended`: a call met ClosingError (the client was closed, or never made its first connection).
      if (glide.isClosed !== true && !events.ended()) return slots && !slots.loaded() ? 'connecting' : 'ready';
      events.closed();
      return 'end';
    },
    connect: () => undefined,
    evalsha: (sha, keys, args) => send(commandArgs({ kind: 'evalsha', sha, keys, args }), keyed(keys[0])),
    eval: (source, keys, args) => send(commandArgs({ kind: 'eval', source, keys, args }), keyed(keys[0])),
    pipeline,
    hmget: (key, fields) => send(['HMGET', key, ...fields], keyed(key)) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send(['SET', key, value, 'EX', String(seconds)], keyed(key)),
    del: (key) => send(['DEL', key], keyed(key)),
    nodeOfSlot: (slot) => slots?.nodeOf(slot),
    primaries: (): PortNode[] => {
      if (!slots) return [{ address: where, info: () => send(['INFO']) as Promise<string> }];
      return slots.primaries().map((node): PortNode => {
        const at = node.lastIndexOf(':');
        const route: GlideRoute = { type: 'routeByAddress', host: node.slice(0, at), port: Number(node.slice(at + 1)) };
        return { address: node, info: () => send(['INFO'], route) as Promise<string> };
      });
    },
    on: events.on,
    off: events.off,
    subscriber: (handlers) => glideSubscriber(glide, cluster, handlers, slots ? slots.nodeOf : undefined),
  };
}

/**
 * A Cluster's slot map, as `CLUSTER SLOTS` gives it (GLIDE keeps its own
 * and does not show it): read at once, and again when nodeOfSlot() finds it
 * older than SLOT_MAP_MAX_AGE_MS (`refresh` when it changed).
 */
function slotMap(send: (args: string[], route?: GlideRoute) => Promise<unknown>, emit: (event: PortEvent) => void) {
  let owners: string[] | undefined;
  let readAt = 0;
  let reading: Promise<void> | undefined;
  let settled = false;
  const read = () => {
    reading ??= send(['CLUSTER', 'SLOTS'], 'randomNode')
      .then((reply) => {
        const next = new Array<string>(16_384);
        for (const range of reply as [number, number, [string, number, ...unknown[]], ...unknown[]][]) {
          const [from, to, primary] = range;
          for (let slot = Number(from); slot <= Number(to); slot++) next[slot] = `${primary[0]}:${Number(primary[1])}`;
        }
        const changed = owners !== undefined && next.some((owner, slot) => owner !== owners![slot]);
        owners = next;
        readAt = performance.now();
        if (changed) emit('refresh');
      })
      .catch(() => undefined)
      .finally(() => {
        reading = undefined;
        if (!settled) {
          settled = true;
          emit('ready');
        }
      });
  };
  read();
  return {
    loaded: () => settled,
    nodeOf: (slot: number): string | undefined => {
      if (performance.now() - readAt > SLOT_MAP_MAX_AGE_MS) read();
      return owners?.[slot];
    },
    primaries: (): string[] => [...new Set(owners?.filter((owner) => owner !== undefined) ?? [])],
  };
}
