import { InvalidArgumentError } from '../errors/errors.js';
import { bunPort, isBunRedis } from './bun.js';
import { refuseEmulators } from './emulators.js';
import { glidePort, isGlide } from './glide.js';
import { ioredisPort, isIoredis } from './ioredis.js';
import { isNodeRedis, nodeRedisPort } from './node-redis.js';
import type { RedisPort } from './port.js';

export { isConnectionFailure, isServerReply } from './errors.js';
export type { ClientKind, ErrorClassifier, PipelineReplies, PortCommand, PortEvent, PortNode, PortStatus, RedisPort, SubscriberHandlers, SubscriberPort } from './port.js';

/** One port per client object, however many LockClients and Redlocks share it. */
const ports = new WeakMap<object, RedisPort>();

/**
 * The port of a user's client, its kind detected once: node-redis first (its
 * `isOpen`, which ioredis lacks), then Valkey GLIDE (its `customCommand`),
 * then Bun's `RedisClient` (its `send`), then ioredis. Undefined for anything else; InvalidArgumentError for a GLIDE
 * client holdfast cannot run on (see glide.ts), UnsupportedClientError for an
 * in-memory emulator (ioredis-mock; see emulators.ts).
 * No client package is imported: the adapters call what the client passed in has.
 */
export function portOf(client: unknown): RedisPort | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  let port = ports.get(client);
  if (!port) {
    refuseEmulators(client);
    if (isNodeRedis(client)) port = nodeRedisPort(client);
    else if (isGlide(client)) port = glidePort(client);
    else if (isBunRedis(client)) port = bunPort(client);
    else if (isIoredis(client)) port = ioredisPort(client);
    else return undefined;
    ports.set(client, port);
  }
  return port;
}

/** `what` is a client holdfast can run on, or InvalidArgumentError (the one phrasing of validate.ts). */
export function requirePort(what: string, client: unknown): RedisPort {
  const port = portOf(client);
  if (!port) {
    const got = client === null ? 'null' : Array.isArray(client) ? `an array of ${client.length}` : typeof client;
    throw new InvalidArgumentError(`Expected \`${what}\` to be an ioredis or node-redis client, got \`${got}\``);
  }
  return port;
}
