import { performance } from 'node:perf_hooks';
import { EventEmitter } from 'eventemitter3';
import type { Engine } from '../engine/engine.js';
import { randomId } from '../engine/owner.js';
import { ClientClosedError, LockTimeoutError, isHoldfastError } from '../errors/errors.js';
import * as validate from '../options/validate.js';
import { claimCall, indexCall, inspectCall, postCall, type InboxTarget, type InboxEngine } from './inbox-calls.js';
import { InboxMessageError } from './inbox-errors.js';
import type { InboxEvents } from './inbox-events.js';
import { inboxIndexes, inboxKeys } from './inbox-keys.js';
import { resolveDrainOptions, resolveInboxOptions, type InboxDrainOptions, type InboxOptions, type InboxPostResult, type ResolvedInboxOptions } from './inbox-options.js';
import { runProcessor, type ClaimedKey, type ProcessorHost } from './inbox-processor.js';

/** Keys listed per slot's index by one read of `keys()`. */
const INDEX_PAGE = 100_000;

/**
 * A per-key inbox: a durable FIFO of messages per key (a conversation, a
 * thread), drained by one processor per key at a time across every process,
 * in post order. The process that posts to an idle key becomes its processor:
 * it holds the key's lease (renewed while it works, reported lost before it
 * could expire: the handler's `signal` aborts) and calls the handler until the
 * queue is empty, releasing the key in the same script that finds it empty,
 * so no message posted meanwhile is stranded. A message is removed only once
 * its handler call resolved (at-least-once: after a crash it is handled again,
 * with a greater fencing `token`). A processor that dies or freezes loses
 * the key; the next post, `recover()`, or a started inbox's timer takes it
 * over. Creating one does no I/O (`client.inbox(name, options)`).
 *
 * @hideconstructor
 */
export class Inbox<T> extends EventEmitter<InboxEvents<T>> {
  /** The inbox's name, as given. */
  readonly name: string;
  readonly #engine: InboxEngine;
  readonly #options: ResolvedInboxOptions<T>;
  readonly #closing = new AbortController();
  readonly #active = new Map<string, Promise<void>>();
  readonly #host: ProcessorHost<T>;
  #timer: NodeJS.Timeout | undefined;
  #recovering: Promise<number> | undefined;
  /** A claim was declined for want of capacity: recover once a processor ends. */
  #declined = false;
  #closed = false;
  readonly #unregister: () => void;

  /** @internal */
  constructor(engine: InboxEngine, name: string, options: ResolvedInboxOptions<T>) {
    super();
    this.#engine = engine;
    this.name = name;
    this.#options = options;
    this.#host = {
      engine,
      name,
      options,
      closing: this.#closing.signal,
      emit: (event, ...args) => {
        try {
          (this.emit as (event: string, ...args: unknown[]) => boolean)(event, ...args);
        } catch (error) {
          engine.emit('error', error);
        }
      },
    };
    // The client's close stops the inbox too: no timer outlives it.
    this.#unregister = engine.onClose(() => void this.close());
  }

  /** Keys this process is the processor of now. */
  get activeKeys(): string[] {
    return [...this.#active.keys()];
  }

  /**
   * Stores `message` at the end of `key`'s queue and resolves once it is in
   * Redis, with its place in the queue. When nobody processes the key and
   * this inbox has a handler (and room under `concurrency`), this process
   * becomes its processor. Rejects with `InboxFullError` at `maxPending`,
   * `InboxMessageError` when the message cannot be serialized or is larger than
   * `maxMessageBytes` (nothing stored either way), `KeyConflictError` when a
   * key holds data holdfast did not write, `ReplicationError` when fewer
   * replicas than `minReplicas` acknowledged it (it is stored on the primary,
   * and handled).
   */
  async post(key: string, message: T): Promise<InboxPostResult> {
    const engine = this.#open();
    validate.nameLike('key', key);
    const stored = this.#serialize(key, message);
    const ready = engine.serverReady();
    if (ready) await ready;
    const target = this.#target(key);
    const owner = this.#canClaim(key) ? engine.clientId + randomId(6) : '';
    const sentAt = performance.now();
    const leaseMs = this.#options.leaseMs;
    const outcome = await postCall(engine, target, stored, this.#options.maxPending, owner, leaseMs, ({ token }) => {
      // Started even when too few replicas acknowledged the post: the message is on the primary.
      if (token > 0) this.#startProcessor({ target, owner, token, deadline: sentAt + leaseMs - engine.marginMs(leaseMs) });
      else if (owner === '' && this.#options.handler && !this.#closed) this.#declined = true;
    });
    return { position: outcome.position };
  }

  /**
   * Resolves once every message posted to `key` before the call was handled
   * (or dead-lettered), wherever its processor runs; woken over pub/sub by
   * each removal. Rejects with `LockTimeoutError` when `waitMs` runs out,
   * `signal.reason` when `signal` aborts, `ClientClosedError` at the client's close.
   */
  async drain(key: string, options?: InboxDrainOptions): Promise<void> {
    const engine = this.#open();
    validate.nameLike('key', key);
    const { waitMs, signal } = resolveDrainOptions(options);
    signal?.throwIfAborted();
    const started = performance.now();
    const deadline = waitMs === undefined ? undefined : started + waitMs;
    const target = this.#target(key);
    const channel = target.keys.channel;
    // Subscribed before the first read: a removal after it is heard.
    const waiter = await engine.waiters.join(channel, randomId(), deadline ?? Infinity, false, signal);
    const timedOut = () => new LockTimeoutError(`${this.name}:${key}`, Math.round(performance.now() - started));
    // A read cut short by waitMs (the deadline bounds the call too) is the wait running out.
    const read = () =>
      inspectCall(engine, target, { deadline, signal }).catch((error: unknown) => {
        if (deadline !== undefined && performance.now() >= deadline && isHoldfastError(error) && error.code.startsWith('ERR_REDIS')) throw timedOut();
        throw error;
      });
    try {
      let state = await read();
      const last = state.tailSeq;
      while (state.pending > 0 && state.headSeq <= last) {
        const now = performance.now();
        if (deadline !== undefined && now >= deadline) throw timedOut();
        if (engine.isClosed()) throw new ClientClosedError();
        // A removal wakes it; without a subscription it looks again after a backoff step.
        await waiter.sleep(Math.min(deadline ?? Infinity, now + waiter.lookAgainIn(this.#options.leaseMs)), signal);
        state = await read();
      }
    } finally {
      waiter.dispose();
    }
  }

  /** Messages pending for `key` now (the one being handled included). */
  async pending(key: string): Promise<number> {
    const engine = this.#open();
    validate.nameLike('key', key);
    return (await inspectCall(engine, this.#target(key))).pending;
  }

  /**
   * The keys with pending messages, read from the inbox's index (one small
   * sorted set per Cluster slot it uses), never from a scan of the keyspace.
   */
  async keys(): Promise<string[]> {
    const engine = this.#open();
    return indexCall(engine, inboxIndexes(engine.options.prefix, this.name), 'all', INDEX_PAGE);
  }

  /**
   * Claims the keys with pending messages whose processor died or froze
   * past its lease (or that nobody claimed), up to `concurrency`, and starts
   * processing them here. Resolves to how many it claimed. Without a handler
   * it claims nothing. A started inbox runs it on a timer.
   */
  recover(): Promise<number> {
    this.#open();
    this.#recovering ??= this.#recover().finally(() => {
      this.#recovering = undefined;
    });
    return this.#recovering;
  }

  /**
   * Runs `recover()` now and every `recoverIntervalMs` until `close()`, so
   * keys whose processor died are taken over without a post to them. Errors
   * are emitted (`error`), never thrown.
   */
  start(): this {
    this.#open();
    if (this.#timer === undefined && this.#options.handler) {
      const tick = () => {
        this.#timer = setTimeout(tick, this.#options.recoverIntervalMs);
        this.#timer.unref();
        this.#recoverQuietly();
      };
      tick();
    }
    return this;
  }

  /**
   * Stops the inbox: no new key is claimed, the timer stops, every running
   * handler's `signal` aborts, and each key this process processes is given
   * back (its pending messages, the one being handled included, stay for the
   * next processor) once its handler call settled. Resolves then.
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#unregister();
      this.#closing.abort(new ClientClosedError());
    }
    await Promise.all([...this.#active.values()]);
    await this.#recovering?.catch(() => undefined);
  }

  #open(): InboxEngine {
    if (this.#closed) throw new ClientClosedError();
    this.#engine.assertOpen();
    return this.#engine;
  }

  #target(key: string): InboxTarget {
    return { inbox: this.name, key, keys: inboxKeys(this.#engine.options.prefix, this.name, key, this.#engine.keyPrefix) };
  }

  #serialize(key: string, message: T): string {
    let stored: unknown;
    try {
      stored = this.#options.serialize(message);
    } catch (error) {
      throw new InboxMessageError(this.name, key, 'serialize threw', undefined, { cause: error });
    }
    if (typeof stored !== 'string') throw new InboxMessageError(this.name, key, `serialize returned ${typeof stored}, not a string`);
    try {
      validate.wellFormedString('message', stored);
    } catch (error) {
      throw new InboxMessageError(this.name, key, 'serialized, it is not a well-formed string', undefined, { cause: error });
    }
    const bytes = Buffer.byteLength(stored, 'utf8');
    if (bytes > this.#options.maxMessageBytes) throw new InboxMessageError(this.name, key, `${bytes} bytes, more than maxMessageBytes (${this.#options.maxMessageBytes})`, bytes);
    return stored;
  }

  #canClaim(key: string): boolean {
    // A key processed here may be released at any moment: a post to it may claim it again.
    return this.#options.handler !== undefined && !this.#closed && (this.#active.has(key) || this.#active.size < this.#options.concurrency);
  }

  #startProcessor(claimed: ClaimedKey): void {
    const key = claimed.target.key;
    // A processor of the key here may still be ending (its release done, its promise not yet
    // settled): the new one starts after it, never beside it.
    const before = this.#active.get(key);
    const start = before ? before.then(() => runProcessor(this.#host, claimed)) : runProcessor(this.#host, claimed);
    const run = start
      .catch((error: unknown) => this.#host.emit('error', error))
      .finally(() => {
        if (this.#active.get(key) === run) this.#active.delete(key);
        if (this.#declined && !this.#closed) {
          this.#declined = false;
          this.#recoverQuietly();
        }
      });
    this.#active.set(key, run);
  }

  #recoverQuietly(): void {
    if (this.#closed || this.#engine.isClosed()) return;
    this.recover().catch((error: unknown) => this.#host.emit('error', error));
  }

  async #recover(): Promise<number> {
    const engine = this.#engine;
    if (!this.#options.handler) return 0;
    const ready = engine.serverReady();
    if (ready) await ready;
    let claimed = 0;
    const room = () => this.#options.concurrency - this.#active.size;
    const due = await indexCall(engine, inboxIndexes(engine.options.prefix, this.name), 'due', Math.max(1, room()));
    for (const key of due) {
      if (this.#closed) break;
      if (this.#active.has(key)) continue;
      if (room() <= 0) {
        this.#declined = true;
        break;
      }
      const target = this.#target(key);
      const owner = engine.clientId + randomId(6);
      const sentAt = performance.now();
      const token = await claimCall(engine, target, owner, this.#options.leaseMs);
      if (token === 0) continue;
      this.#startProcessor({ target, owner, token, deadline: sentAt + this.#options.leaseMs - engine.marginMs(this.#options.leaseMs) });
      claimed++;
    }
    return claimed;
  }
}

/** `client.inbox(name, options)`: an inbox by name (no I/O). */
export function newInbox<T>(engine: Engine, name: string, options: InboxOptions<T> | undefined): Inbox<T> {
  engine.assertOpen();
  validate.lockName(name);
  return new Inbox<T>(engine, name, resolveInboxOptions<T>(options, engine.options.leaseMs));
}
