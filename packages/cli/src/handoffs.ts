import { electionKeys, lockKeys, readWriteLockKeys, semaphoreKeys } from '@holdfast/core/keys';
import type { Cluster, Redis } from 'ioredis';
import type { Client } from './connect.js';
import type { LockState } from './snapshot.js';

function isCluster(redis: Client): redis is Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/** The pub/sub channel holdfast's scripts announce `state`'s releases and hand-offs on. */
export function channelOf(prefix: string, state: Pick<LockState, 'name' | 'kind'>): string {
  if (state.kind === 'semaphore') return semaphoreKeys(prefix, state.name).channel;
  if (state.kind === 'election') return electionKeys(prefix, state.name).channel;
  return (state.kind === 'rwlock' ? readWriteLockKeys : lockKeys)(prefix, state.name).channel;
}

/**
 * Counts hand-offs as holdfast's scripts announce them: one message on the
 * lock's channel each time a release hands the lock to a queued waiter
 * (`h|…`), or grants a read-write lock to its queued readers at once (`g|…`,
 * one hand-off). Two refreshes compared would miss every hand-off but the
 * last between them; the messages miss none on a lock whose channel is
 * subscribed, which each lock's is from the refresh that first lists it.
 *
 * Listens as the waiters do: SSUBSCRIBE (Redis 7+, where the scripts
 * SPUBLISH; one subscriber per primary on a Cluster), SUBSCRIBE on older
 * servers, whose scripts PUBLISH.
 */
export class HandoffCounter {
  /** Hand-offs announced since the counter started. */
  count = 0;
  readonly #redis: Client;
  readonly #prefix: string;
  readonly #followed = new Set<string>();
  #subscriber: Redis | Cluster | undefined;
  #sharded = true;

  constructor(redis: Client, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** Subscribes to the channels of the locks in `states` not followed yet; resolves once subscribed. */
  async follow(states: readonly LockState[]): Promise<void> {
    // A latch or a barrier hands nothing off: its messages are not hand-offs.
    const channels = states
      .filter((state) => state.kind !== 'latch' && state.kind !== 'barrier')
      .map((state) => channelOf(this.#prefix, state))
      .filter((channel) => !this.#followed.has(channel));
    if (channels.length === 0) return;
    const subscriber = this.#subscriber ?? this.#open();
    for (const channel of channels) this.#followed.add(channel);
    if (this.#sharded) {
      try {
        // One call per channel: on a Cluster a call's channels must share a slot.
        await Promise.all(channels.map((channel) => subscriber.ssubscribe(channel)));
        return;
      } catch (error) {
        if (!/unknown command/i.test(String((error as Error | undefined)?.message))) throw error;
        // Before Redis 7: the scripts PUBLISH, so SUBSCRIBE, every channel followed so far.
        this.#sharded = false;
        await subscriber.subscribe(...this.#followed);
        return;
      }
    }
    await subscriber.subscribe(...channels);
  }

  /** Ends the subscription connection(s). */
  close(): void {
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }

  #open(): Redis | Cluster {
    const subscriber = isCluster(this.#redis)
      ? this.#redis.duplicate([], { shardedSubscribers: true })
      : this.#redis.duplicate();
    // Its failures reach the caller through follow()'s rejection; the event would only repeat them.
    subscriber.on('error', () => undefined);
    const onMessage = (channel: string, message: string) => {
      if (this.#followed.has(channel) && (message.startsWith('h|') || message.startsWith('g|'))) this.count++;
    };
    subscriber.on('smessage', onMessage);
    subscriber.on('message', onMessage);
    this.#subscriber = subscriber;
    return subscriber;
  }
}
