import { channel } from 'node:diagnostics_channel';

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
