import { HoldfastError, setFields } from '../errors/errors.js';

/** `post` found the key's queue at `maxPending` messages: nothing was stored. */
export class InboxFullError extends HoldfastError {
  /** The inbox's name. */
  readonly inbox!: string;
  /** The key posted to. */
  readonly key!: string;
  /** Messages pending for the key. */
  readonly pending!: number;

  constructor(inbox: string, key: string, pending: number) {
    super('ERR_INBOX_FULL', `Key \`${key}\` of inbox \`${inbox}\` has ${pending} pending messages (maxPending): message not stored`);
    setFields(this, { inbox, key, pending });
  }
}

/**
 * `post` refused a message: serialized, it is larger than `maxMessageBytes`,
 * or `serialize` threw or returned something other than a well-formed string
 * (the error is its `cause`). Nothing was stored.
 */
export class InboxMessageError extends HoldfastError {
  /** The inbox's name. */
  readonly inbox!: string;
  /** The key posted to. */
  readonly key!: string;
  /** The serialized size in UTF-8 bytes, when it was too large. */
  readonly bytes: number | undefined;

  constructor(inbox: string, key: string, reason: string, bytes?: number, options?: { cause?: unknown }) {
    super('ERR_INBOX_MESSAGE', `Message to key \`${key}\` of inbox \`${inbox}\` not stored: ${reason}`, options);
    setFields(this, { inbox, key, bytes });
  }
}
