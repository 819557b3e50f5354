import { channel, tracingChannel } from 'node:diagnostics_channel';

/** The diagnostics channel of latch and barrier operations (a `TracingChannel`, as `holdfast:acquire`). */
export const SYNC_CHANNEL = 'holdfast:sync';

/** Context of `holdfast:sync`: one operation of a count-down latch or a barrier. */
export interface SyncMessage {
  /** The latch's or barrier's name. */
  readonly name: string;
  /** What it is. */
  readonly kind: 'latch' | 'barrier';
  /** The method called. */
  readonly operation: 'trySetCount' | 'countDown' | 'wait' | 'countDownAndWait' | 'arrive';
  /** The calling `LockClient`'s id. */
  readonly clientId: string;
  /** The caller's `signal` option, when it gave one. */
  readonly signal?: AbortSignal;
  /**
   * Set on success: what the method resolved with (`countDown`: the count
   * after it; `trySetCount`: whether it set; `arrive`: `{ generation }`).
   */
  result?: unknown;
  /** Set on failure: what the method rejected with. */
  error?: unknown;
}

const syncChannel = tracingChannel<unknown, SyncMessage>(SYNC_CHANNEL);

/** Runs `run`, traced on `holdfast:sync` with the context `message()` builds only when someone listens. */
export function traceSync<T>(message: () => SyncMessage, run: () => Promise<T>): Promise<T> {
  const ch = syncChannel;
  const listened =
    ch.start.hasSubscribers || ch.end.hasSubscribers || ch.asyncStart.hasSubscribers || ch.asyncEnd.hasSubscribers || ch.error.hasSubscribers;
  if (!listened) return run();
  return ch.tracePromise(run, message());
}

/** The diagnostics channel of inbox outcomes (a plain channel: one message per outcome). */
export const INBOX_CHANNEL = 'holdfast:inbox';

/**
 * Message of `holdfast:inbox`: one outcome of an inbox's processing, as its
 * `handled`, `retried` and `dead` events report it.
 */
export interface InboxMessage {
  /** The inbox's name (not the key: keys are as many as the conversations). */
  readonly name: string;
  /** Always `'inbox'`. */
  readonly kind: 'inbox';
  /** The processing `LockClient`'s id. */
  readonly clientId: string;
  /** `handled`: a handler call resolved; `retried`: it rejected and is tried again; `dead`: a message was dropped. */
  readonly outcome: 'handled' | 'retried' | 'dead';
  /** Messages concerned: the call's (`handled`, `retried`), 1 for `dead`. */
  readonly count: number;
  /** The attempt the call was (1 for the first). */
  readonly attempt: number;
  /** `handled`: ms from the first message's post to the call's start (server clock). */
  readonly queueWaitMs?: number;
  /** `handled`: ms the handler call took. */
  readonly durationMs?: number;
  /** `dead`: why (`ttl`, `attempts`, `malformed`). */
  readonly reason?: string;
}

const inboxChannel = channel(INBOX_CHANNEL);

/** Publishes the message `message()` builds, only when someone listens. */
export function publishInbox(message: () => InboxMessage): void {
  if (inboxChannel.hasSubscribers) inboxChannel.publish(message());
}
