import { performance } from 'node:perf_hooks';
import { ClientClosedError, PubSubRefusedError, RedisCommandError, RedisTimeoutError, isHoldfastError } from '../errors/errors.js';
import type { WaitMode } from '../options/options.js';
import { isServerReply } from '../port/errors.js';
import { errorText, withTimeout, withinLimits } from '../port/redis-call.js';
import type { RedisPort, SubscriberPort } from '../port/index.js';
import { Waiter, type Pace } from './waiter.js';

/**
 * How release messages travel: sharded (SPUBLISH, Redis 7+) or classic pub/sub.
 *
 * @inline
 */
export type PubSubMode = 'sharded' | 'classic';

/**
 * Pub/sub wake-ups. One subscriber connection per client (a `duplicate()` of
 * the user's client), one subscription per lock channel shared by the local
 * waiters of that lock, kept for a while after the last waiter leaves.
 *
 * On Redis 7 and later the scripts publish with SPUBLISH and waiters listen
 * with SSUBSCRIBE: on a Cluster a release then reaches only the shard that owns
 * the lock's slot instead of being broadcast over the cluster bus to every node.
 * Older servers reject SSUBSCRIBE as an unknown command; the first such reply
 * switches this client to classic SUBSCRIBE for good (their scripts PUBLISH).
 *
 * Messages published by the scripts:
 *   h|<waiterId>|<claimMs>|<token>|<serverMs>  the lock was handed to that waiter at
 *                           server time serverMs; the others wake by the end of its
 *                           claim at the latest, in case it never comes
 *   g|<claimMs>|<token>|<serverMs>|<waiterId>|…  read-write lock: every waiter named
 *                           was granted a read hold (one message for all of them)
 *   f                       the lock is free and no live waiter was queued; everyone retries (a
 *                           Lock's last release sends none when the queue is empty: its waiters
 *                           queue before they sleep; Redlock's, which never queue, get one)
 * Any other message wakes every waiter of its channel, and is kept, in order,
 * by the waiters that joined with `keepMessages` (an election's observers read
 * each leader change from its message: see election/observe.ts).
 *
 * Spinning (`wait: 'spin'`, or `'auto'` once the server refused a
 * subscription): no subscriber is made and nothing is subscribed; `join`
 * registers the waiter at once, and every waiter, not listening, looks again
 * after `Waiter.lookAgainIn` (growing backoff with full jitter). A queued
 * waiter's turn is kept for it by the scripts (the hand-off's claim) and found
 * by its next look, which comes within half the hand-off timeout.
 */

interface ChannelState {
  refs: number;
  ready: boolean;
  subscribing: Promise<void> | undefined;
  idleSince: number;
  readonly waiters: Map<string, Waiter>;
}

/** How a client's waiters wait, and how a spinning one paces its looks (see `LockClientOptions`). */
export interface WaitersOptions {
  readonly lingerMs: number;
  readonly timeoutMs: number;
  readonly onError: (error: unknown) => void;
  /** @default 'pubsub' (Redlock's waiters) */
  readonly wait?: WaitMode;
  /** Shortest and longest sleep of a spinning waiter. @default 10 and 100 */
  readonly spinMinMs?: number;
  readonly spinMaxMs?: number;
  /** Told once when `wait: 'auto'` turned to spinning. */
  readonly onWarning?: (warning: PubSubRefusedError) => void;
}

export class Waiters {
  readonly #redis: RedisPort;
  readonly #lingerMs: number;
  readonly #timeoutMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #onWarning: (warning: PubSubRefusedError) => void;
  readonly #wait: WaitMode;
  readonly #spinMinMs: number;
  readonly #spinMaxMs: number;
  readonly #channels = new Map<string, ChannelState>();
  #subscriber: SubscriberPort | undefined;
  #mode: PubSubMode = 'sharded';
  #spinning: boolean;
  #sweepTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(redis: RedisPort, options: WaitersOptions) {
    this.#redis = redis;
    this.#lingerMs = options.lingerMs;
    this.#timeoutMs = options.timeoutMs;
    this.#wait = options.wait ?? 'pubsub';
    this.#spinning = this.#wait === 'spin';
    this.#spinMinMs = options.spinMinMs ?? 10;
    this.#spinMaxMs = Math.max(this.#spinMinMs, options.spinMaxMs ?? 100);
    this.#onWarning = options.onWarning ?? (() => undefined);
    // The pub/sub connection's failures (a refused connection, a socket closed under a
    // command) come from the client as its own errors: reported as holdfast's, like every other.
    // Once spinning, the subscriber is gone: what it still reports is nobody's concern.
    this.#onError = (error) => {
      if (this.#spinning || this.#closed) return;
      options.onError(isHoldfastError(error) ? error : new RedisCommandError(`Redis pub/sub connection failed: ${errorText(error)}`, { cause: error }));
    };
  }

  /** True when a wake-up on this channel would reach us now. */
  isListening(channel: string): boolean {
    return this.#channels.get(channel)?.ready === true && this.#subscriber?.listening === true;
  }

  /** True once waits poll instead of listening: `wait: 'spin'`, or `'auto'` after a refused subscription. */
  get spinning(): boolean {
    return this.#spinning;
  }

  /** Sharded until a server turned SSUBSCRIBE down as unknown, classic after. */
  get pubSubMode(): PubSubMode {
    return this.#mode;
  }

  /** Number of channels currently subscribed or subscribing. */
  get channelCount(): number {
    return this.#channels.size;
  }

  /**
   * Registers a waiter and makes sure its channel is subscribed before
   * resolving, so no release after this point goes unheard. If subscribing
   * fails the waiter still works, on its timers alone, and `error` is emitted.
   * A subscription still under way at the waiter's `deadline` or when
   * `signal` aborts is not waited for any longer (a hung server answers
   * neither): the waiter is returned, and its caller finds its wait over.
   */
  async join(channel: string, waiterId: string, deadline: number, keepMessages = false, signal?: AbortSignal): Promise<Waiter> {
    if (this.#closed) throw new ClientClosedError();
    let state = this.#channels.get(channel);
    if (!state) {
      state = { refs: 0, ready: false, subscribing: undefined, idleSince: 0, waiters: new Map() };
      this.#channels.set(channel, state);
    }
    state.refs++;
    const joined = state;
    const waiter = new Waiter(waiterId, deadline, () => this.#leave(channel, joined, waiterId), keepMessages, this.#pace(channel));
    state.waiters.set(waiterId, waiter);
    if (!state.ready && !this.#spinning) {
      state.subscribing ??= this.#subscribe(channel, state);
      const limits = { deadline: deadline === Infinity ? undefined : deadline, signal };
      // #subscribe never rejects: only the limits can end this wait early.
      await withinLimits(state.subscribing, limits).catch(() => undefined);
    }
    return waiter;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#sweepTimer) clearTimeout(this.#sweepTimer);
    for (const state of this.#channels.values()) {
      for (const waiter of state.waiters.values()) waiter.fail(new ClientClosedError());
    }
    this.#channels.clear();
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    subscriber?.close();
  }

  /**
   * How a waiter of `channel` paces its looks: as the kind plans while the
   * channel is subscribed, else after a backoff: the n-th look without a
   * subscription sleeps a random time from spinMinMs to spinMinMs × 2ⁿ, at
   * most spinMaxMs (full jitter: waiters that started together drift apart).
   */
  #pace(channel: string): Pace {
    return {
      listening: () => this.isListening(channel),
      spinMs: (attempt) => {
        const cap = Math.min(this.#spinMaxMs, this.#spinMinMs * 2 ** Math.min(attempt, 30));
        return this.#spinMinMs + Math.floor(Math.random() * (cap - this.#spinMinMs + 1));
      },
    };
  }

  async #subscribe(channel: string, state: ChannelState): Promise<void> {
    try {
      const subscriber = this.#getSubscriber();
      await subscriber.whenReady(this.#timeoutMs);
      try {
        await this.#send(subscriber, channel);
      } catch (error) {
        if (this.#wait === 'auto' && !this.#spinning && (await this.#refused(channel, error))) {
          this.#spin(error);
          return;
        }
        throw error;
      }
      // Turned to spinning meanwhile: its subscriber is gone.
      if (!this.#spinning) state.ready = true;
    } catch (error) {
      this.#onError(error);
    } finally {
      state.subscribing = undefined;
    }
  }

  /**
   * True when the subscription `error` ended was refused, not lost: an error
   * reply (an ACL, a proxy without pub/sub) but a passing state of the server,
   * or a subscription never confirmed (a client that resends it until its
   * timeout, as GLIDE does under an ACL) while the server answers a plain
   * read of the same slot. A server that answers nothing is a connection
   * failure, as before.
   */
  async #refused(channel: string, error: unknown): Promise<boolean> {
    if (error instanceof RedisTimeoutError) {
      try {
        await withTimeout(this.#redis.hmget(channel, ['-']), this.#timeoutMs);
        return true;
      } catch (probeError) {
        return isServerReply(probeError) && !isPassing(probeError);
      }
    }
    return isServerReply(error) && !isPassing(error);
  }

  /** `wait: 'auto'` turns to spinning for good: the subscriber goes, with whatever it had pending. */
  #spin(error: unknown): void {
    this.#spinning = true;
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    for (const state of this.#channels.values()) state.ready = false;
    subscriber?.close();
    // Waiters asleep on a message that will not come look again now, and pace themselves from then on.
    for (const state of this.#channels.values()) {
      for (const waiter of state.waiters.values()) waiter.markGap();
    }
    this.#onWarning(new PubSubRefusedError(errorText(error), { cause: error }));
  }

  /**
   * (S)SUBSCRIBE one channel; the first "unknown command" switches to classic
   * pub/sub for good, as does a refused SSUBSCRIBE that SUBSCRIBE then gets
   * (an ACL of the classic commands: the scripts publish both ways).
   */
  async #send(subscriber: SubscriberPort, channel: string): Promise<void> {
    if (this.#mode === 'sharded') {
      try {
        await withTimeout(subscriber.subscribe(channel, true), this.#timeoutMs);
      } catch (error) {
        if (isUnknownCommand(error)) {
          this.#mode = 'classic';
        } else if (isServerReply(error) && !isPassing(error)) {
          await withTimeout(subscriber.subscribe(channel, false), this.#timeoutMs);
          this.#mode = 'classic';
          return;
        } else {
          throw error;
        }
        await withTimeout(subscriber.subscribe(channel, false), this.#timeoutMs);
      }
    } else {
      await withTimeout(subscriber.subscribe(channel, false), this.#timeoutMs);
    }
  }

  #getSubscriber(): SubscriberPort {
    // A release published while the subscriber was reconnecting (or while a
    // slot moved) reached nobody: once subscriptions are back, every waiter
    // re-checks its lock instead of sleeping out the holder's lease.
    // Every subscription is sent again too (a repeat is harmless): one
    // that did not survive the reconnection would leave its waiters asleep.
    this.#subscriber ??= this.#redis.subscriber({
      onMessage: (channel, message) => this.#onMessage(channel, message),
      onReconnected: () => this.#resubscribeAll(),
      onError: (error) => this.#onError(error),
    });
    return this.#subscriber;
  }

  #resubscribeAll(): void {
    const subscriber = this.#subscriber;
    if (!subscriber) return;
    for (const [channel, state] of this.#channels) {
      if (state.ready) {
        this.#send(subscriber, channel).catch((error: unknown) => this.#onError(error));
      } else if (state.refs > 0 && !state.subscribing) {
        // A subscribe that failed earlier: its waiters are still there.
        state.subscribing = this.#subscribe(channel, state);
      }
    }
    // Every waiter is woken, and told that messages may have been missed.
    for (const state of this.#channels.values()) {
      for (const waiter of state.waiters.values()) waiter.markGap();
    }
  }

  #onMessage(channel: string, message: string): void {
    const state = this.#channels.get(channel);
    if (!state || state.waiters.size === 0) return;
    const [kind, first, second, third, fourth] = message.split('|');
    if (kind === 'h' && first !== undefined) {
      const claimMs = Number(second);
      const token = Number(third);
      const serverMs = fourth === undefined ? undefined : Number(fourth);
      const handoff =
        Number.isSafeInteger(token) && claimMs > 0
          ? { token, claimMs, serverMs: Number.isSafeInteger(serverMs) ? serverMs : undefined }
          : undefined;
      for (const [id, waiter] of state.waiters) {
        if (id === first) waiter.wake(handoff);
        else waiter.wakeBy(claimMs);
      }
    } else if (kind === 'g' && fourth !== undefined) {
      this.#onGrants(state, message.split('|'));
    } else {
      for (const waiter of state.waiters.values()) waiter.deliver(message);
    }
  }

  /** Readers granted together by one release of a read-write lock: each named waiter starts on it. */
  #onGrants(state: ChannelState, parts: string[]): void {
    const [, claim, tokenText, serverText] = parts;
    const claimMs = Number(claim);
    const token = Number(tokenText);
    const serverMs = Number(serverText);
    const named = new Set(parts.slice(4));
    const handoff =
      Number.isSafeInteger(token) && claimMs > 0
        ? { token, claimMs, serverMs: Number.isSafeInteger(serverMs) ? serverMs : undefined }
        : undefined;
    for (const [id, waiter] of state.waiters) {
      if (named.has(id)) waiter.wake(handoff);
      else waiter.wakeBy(claimMs);
    }
  }

  #leave(channel: string, state: ChannelState, waiterId: string): void {
    state.waiters.delete(waiterId);
    state.refs--;
    if (state.refs > 0 || this.#closed) return;
    state.idleSince = performance.now();
    this.#scheduleSweep(this.#lingerMs);
  }

  #scheduleSweep(delayMs: number): void {
    if (this.#sweepTimer) return;
    this.#sweepTimer = setTimeout(() => {
      this.#sweepTimer = undefined;
      this.#sweepIdle();
    }, delayMs);
    this.#sweepTimer.unref();
  }

  #sweepIdle(): void {
    const now = performance.now();
    let nextIn = Infinity;
    for (const [channel, state] of this.#channels) {
      if (state.refs > 0) continue;
      const idleFor = now - state.idleSince;
      if (idleFor >= this.#lingerMs) {
        this.#channels.delete(channel);
        if (state.ready && this.#subscriber) {
          this.#subscriber.unsubscribe(channel, this.#mode === 'sharded').catch((error: unknown) => this.#onError(error));
        }
      } else {
        nextIn = Math.min(nextIn, this.#lingerMs - idleFor);
      }
    }
    if (nextIn !== Infinity) this.#scheduleSweep(Math.ceil(nextIn));
  }
}

function isUnknownCommand(error: unknown): boolean {
  return error instanceof Error && /unknown command/i.test(error.message);
}

/** An error reply of a passing state (loading, busy, a moved slot, a failover): no refusal. */
function isPassing(error: unknown): boolean {
  return error instanceof Error && /^(?:\S+ )?(?:LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|MOVED|ASK|MASTERDOWN|READONLY)\b/.test(error.message);
}
