import { hostname } from 'node:os';
import type { RedisPort } from '../port/index.js';

/**
 * Who a client is, for the people reading its locks (the `holdfast` CLI).
 * Every owner id starts with its client's id, so a lock records nothing more:
 * the client writes one small key once, `<prefix>:client:<id>` → JSON
 * `{ name, host, pid, startedAt }`, and readers join on the owner's first
 * `CLIENT_ID_LENGTH` characters. The key expires after `REGISTRATION_TTL_S`
 * and is written again every third of that while the client is open, so a
 * crashed process's entry vanishes by itself; `close()` deletes it.
 *
 * Written first at the client's first acquisition, sent before that
 * acquisition's script on the same connection and not awaited: it adds no
 * round trip, and a client that never acquires (never a holder) writes nothing.
 */

/** Length of a client id, the start of every owner id the client creates. */
export const CLIENT_ID_LENGTH = 8;
/** Lifetime of a registration, in seconds. */
export const REGISTRATION_TTL_S = 60;

/** What a client registers of itself. */
export interface ClientRecord {
  /** The `name` option of the LockClient, when given. */
  readonly name?: string;
  /** The host name of its machine. */
  readonly host: string;
  /** Its process id. */
  readonly pid: number;
  /** When the client was created (ms since the epoch). */
  readonly startedAt: number;
}

/** The registration key of client `id` under `prefix`. */
export function registrationKey(prefix: string, id: string): string {
  return `${prefix}:client:${id}`;
}

/** A registration's value read back; undefined for anything that is not one. */
export function parseClientRecord(value: string | null | undefined): ClientRecord | undefined {
  if (!value) return undefined;
  try {
    const record = JSON.parse(value) as Partial<ClientRecord>;
    if (typeof record.host !== 'string' || typeof record.pid !== 'number' || typeof record.startedAt !== 'number') return undefined;
    return typeof record.name === 'string' ? { name: record.name, host: record.host, pid: record.pid, startedAt: record.startedAt } : { host: record.host, pid: record.pid, startedAt: record.startedAt };
  } catch {
    return undefined;
  }
}

/** Writes and refreshes one client's registration. */
export class ClientRegistration {
  readonly #redis: RedisPort;
  readonly #key: string;
  readonly #value: string;
  #timer: NodeJS.Timeout | undefined;
  #pending = false;
  /** True once a write was sent. */
  #sent = false;
  #stopped = false;

  constructor(redis: RedisPort, prefix: string, id: string, name: string | undefined) {
    this.#redis = redis;
    this.#key = registrationKey(prefix, id);
    const record: ClientRecord = { ...(name !== undefined && { name }), host: hostname(), pid: process.pid, startedAt: Date.now() };
    this.#value = JSON.stringify(record);
  }

  /** Registers now and keeps the entry alive until `stop()`; later calls cost a field read. */
  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setInterval(() => this.#send(), (REGISTRATION_TTL_S * 1000) / 3);
    this.#timer.unref();
    this.#send();
  }

  /**
   * Stops refreshing and deletes the entry, best effort and without waiting:
   * sent only once a write of it was sent (behind that write on the same
   * connection, so never overtaken by it), and only while the client is
   * connected (a command queued for a server that does not answer would wait
   * in the client after `close()`; the entry then expires by itself). Not
   * awaited, so `close()` waits for no round trip.
   */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    // The key carries this client's random id: only this client ever wrote it.
    if (!this.#sent || this.#redis.status() !== 'ready') return;
    try {
      this.#redis.del(this.#key).catch(() => undefined);
    } catch {
      // A client that refuses at once (closed meanwhile): the entry expires by itself.
    }
  }

  #send(): void {
    // One write at a time: a hung server must not pile them up.
    if (this.#pending) return;
    this.#pending = true;
    // Best effort: the entry is a label for people. A server that refuses it
    // (an ACL without SET, a full memory) reports itself through the lock
    // calls; the CLI then shows the bare client id.
    this.#sent = true;
    this.#redis.setEx(this.#key, this.#value, REGISTRATION_TTL_S).then(
      () => (this.#pending = false),
      () => (this.#pending = false),
    );
  }
}
