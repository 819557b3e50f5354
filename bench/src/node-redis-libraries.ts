import { randomBytes } from 'node:crypto';
import type { LockClient } from '@holdfast/core';
import { holdfastLocker } from './holdfast-locker.js';
import type { HoldfastClientOpener, LockLibrary } from './library-types.js';
import { RELEASE_TO_NEXT, TAKE_OR_QUEUE } from './handoff-floor.js';
import { connectNodeRedis, type NodeRedisClient } from './node-redis-clients.js';

/**
 * holdfast over node-redis (the `redis` package) beside its ioredis rows: the same `LockClient` given a
 * connected node-redis client as the application has it, and a floor on node-redis, so holdfast's ratio on
 * node-redis is read against what the same client does with the bare SET NX PX + EVALSHA. libraries.ts and
 * renewal-holders.ts register these rows (the renewal row is renewal-holders.ts's holder, on this client).
 */

/** Lease of every acquisition that names one, as for the ioredis rows. */
const LEASE_MS = 30_000;

export const NODE_REDIS_FLOOR_ID = 'floor:node-redis';

/** The client as holdfast's constructor takes it. */
type HoldfastClient = ConstructorParameters<typeof LockClient>[0];

/** The node-redis client given to holdfast as it is. */
function asHoldfastClient(client: NodeRedisClient): HoldfastClient {
  return client as unknown as HoldfastClient;
}

const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

const nodeRedisFloor: LockLibrary = {
  id: NODE_REDIS_FLOOR_ID,
  label: 'floor on node-redis 5: SET NX PX + EVALSHA',
  settings: 'no library, node-redis 5 client: SET key token NX PX 30000, then EVALSHA compare-and-delete',
  contends: false,
  async open(port) {
    const redis = await connectNodeRedis(port);
    const sha = await redis.scriptLoad(COMPARE_AND_DELETE);
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    return {
      async acquire(key) {
        const token = `${prefix}:${++n}`;
        if ((await redis.set(key, token, { NX: true, PX: LEASE_MS })) !== 'OK') throw new Error('floor: key busy');
        return async () => {
          await redis.evalSha(sha, { keys: [key], arguments: [token] });
        };
      },
      async close() {
        redis.destroy();
      },
    };
  },
};

export const NODE_REDIS_HANDOFF_FLOOR_ID = 'floor:handoff:node-redis';

/** The bare hand-off floor (handoff-floor.ts: the same scripts) on node-redis 5: what node-redis's own pub/sub path allows a hand-off. */
export const nodeRedisHandoffFloor: LockLibrary = {
  id: NODE_REDIS_HANDOFF_FLOOR_ID,
  label: 'floor on node-redis 5: bare FIFO pub/sub hand-off',
  settings: 'no library, node-redis 5 clients (a duplicate for SSUBSCRIBE): the scripts of floor:handoff',
  contends: true,
  async open(port) {
    const redis = await connectNodeRedis(port);
    const subscriber = redis.duplicate();
    subscriber.on('error', () => undefined);
    await subscriber.connect();
    const [take, release] = await Promise.all([redis.scriptLoad(TAKE_OR_QUEUE), redis.scriptLoad(RELEASE_TO_NEXT)]);
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    const waiting = new Map<string, () => void>();
    const subscribed = new Set<string>();
    const onMessage = (id: string) => {
      const wake = waiting.get(id);
      waiting.delete(id);
      wake?.();
    };
    const lease = String(LEASE_MS);
    return {
      async acquire(key) {
        const keys = [`{${key}}:l`, `{${key}}:q`, `{${key}}:c`];
        if (!subscribed.has(key)) {
          await subscriber.sSubscribe(keys[2]!, onMessage);
          subscribed.add(key);
        }
        const id = `${prefix}:${++n}`;
        // Before the call: the hand-off message may arrive ahead of its reply.
        const handed = new Promise<void>((resolve) => waiting.set(id, resolve));
        if ((await redis.evalSha(take, { keys: keys.slice(0, 2), arguments: [id, lease] })) === 1) waiting.delete(id);
        else await handed;
        return async () => {
          await redis.evalSha(release, { keys, arguments: [id, lease] });
        };
      },
      async close() {
        subscriber.destroy();
        redis.destroy();
      },
    };
  },
};

const holdfastOnNodeRedis: LockLibrary = {
  id: 'holdfast:node-redis',
  label: 'holdfast (node-redis 5)',
  settings: "new LockClient(await createClient().connect(), { prefix }) with redis@5.12.1; holdfast's defaults",
  contends: true,
  async open(port) {
    const redis = await connectNodeRedis(port);
    return holdfastLocker(asHoldfastClient(redis), () => redis.destroy());
  },
};

/** Scenarios 1–3 on node-redis 5, with its floors (the hand-off floor runs with contention only). */
export const NODE_REDIS_LIBRARIES: readonly LockLibrary[] = [nodeRedisFloor, nodeRedisHandoffFloor, holdfastOnNodeRedis];

/** Multi-process contention runs these beside the ioredis libraries. */
export const NODE_REDIS_MULTIPROCESS_IDS: readonly string[] = [NODE_REDIS_HANDOFF_FLOOR_ID, 'holdfast:node-redis'];

/** holdfast's renewal row on a node-redis 5 client (renewal-holders.ts): `holdfast:node-redis`. */
export const onNodeRedis5: HoldfastClientOpener = {
  idSuffix: ':node-redis',
  labelSuffix: ' (node-redis 5)',
  settingsClient: 'new LockClient(nodeRedisClient)',
  async open(port) {
    const redis = await connectNodeRedis(port);
    return { client: asHoldfastClient(redis), close: () => redis.destroy() };
  },
};
