import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { counted } from './command-counter.js';
import type { LockLibrary } from './library-types.js';
import { connect } from './processes.js';

/**
 * The floor of scenario 3: the least any lock that hands over by pub/sub can do, so holdfast's hand-off
 * figures can be read against what the machine allows.
 */

export const HANDOFF_FLOOR_ID = 'floor:handoff';

const LEASE_MS = 30_000;

/** KEYS[1] lock, KEYS[2] queue; ARGV[1] caller id, ARGV[2] lease ms. 1: taken, 0: queued. */
export const TAKE_OR_QUEUE = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
redis.call('RPUSH', KEYS[2], ARGV[1])
return 0`;

/** KEYS[1] lock, KEYS[2] queue, KEYS[3] channel; ARGV[1] holder id, ARGV[2] lease ms. 1: handed over, 0: freed, -1: not held. */
export const RELEASE_TO_NEXT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local nextId = redis.call('LPOP', KEYS[2])
if not nextId then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('SET', KEYS[1], nextId, 'PX', ARGV[2])
redis.call('SPUBLISH', KEYS[3], nextId)
return 1`;

export const handoffFloor: LockLibrary = {
  id: HANDOFF_FLOOR_ID,
  label: 'floor: bare FIFO pub/sub hand-off',
  settings: 'no library: one script takes the key or queues the caller, the release script gives the key to the next caller and SPUBLISHes its id; no fencing, re-entry, claims or timeouts',
  contends: true,
  async open(port) {
    const redis = counted(connect(port));
    const subscriber: Redis = redis.duplicate();
    subscriber.on('error', () => undefined);
    const [take, release] = (await Promise.all([redis.script('LOAD', TAKE_OR_QUEUE), redis.script('LOAD', RELEASE_TO_NEXT)])) as [string, string];
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    const waiting = new Map<string, () => void>();
    const subscribed = new Set<string>();
    subscriber.on('smessage', (_channel: string, id: string) => {
      const wake = waiting.get(id);
      waiting.delete(id);
      wake?.();
    });
    return {
      async acquire(key) {
        const keys = [`{${key}}:l`, `{${key}}:q`, `{${key}}:c`] as const;
        if (!subscribed.has(key)) {
          await subscriber.ssubscribe(keys[2]);
          subscribed.add(key);
        }
        const id = `${prefix}:${++n}`;
        // Before the call: the hand-off message may arrive ahead of its reply.
        const handed = new Promise<void>((resolve) => waiting.set(id, resolve));
        if ((await redis.evalsha(take, 2, keys[0], keys[1], id, LEASE_MS)) === 1) waiting.delete(id);
        else await handed;
        return async () => {
          await redis.evalsha(release, 3, keys[0], keys[1], keys[2], id, LEASE_MS);
        };
      },
      async close() {
        subscriber.disconnect();
        redis.disconnect();
      },
    };
  },
};
