import { CLIENT_ID_LENGTH, parseClientRecord, registrationKey } from '@holdfast/core/keys';
import type { Client } from './connect.js';

/** What `readState` needs to name holders (shared across the states of one snapshot). */
export interface HolderNamesLike {
  /** `owner`'s label. */
  label(owner: string): Promise<string>;
}

/** Labels client ids with what they registered; one GET per distinct client. */
export class HolderNames {
  readonly #cache = new Map<string, Promise<string>>();
  constructor(
    readonly redis: Client,
    readonly prefix: string,
  ) {}

  label(owner: string): Promise<string> {
    const id = owner.slice(0, CLIENT_ID_LENGTH);
    let label = this.#cache.get(id);
    if (!label) {
      label = this.redis.get(registrationKey(this.prefix, id)).then(
        (value) => {
          const record = parseClientRecord(value);
          if (!record) return `client ${id}`;
          const where = `${record.host}:${record.pid}`;
          return record.name ? `${record.name} (${where})` : where;
        },
        () => `client ${id}`,
      );
      this.#cache.set(id, label);
    }
    return label;
  }
}
