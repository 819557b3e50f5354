import { InvalidArgumentError } from '@holdfast/core';

/** The table `createFenceTable()` and every fenced call use when none is named. */
export const DEFAULT_TABLE = 'holdfast_fences';

/** The longest resource name accepted, in UTF-8 bytes (the key column holds 1024). */
export const MAX_RESOURCE_BYTES = 1024;

/** The longest table name accepted: PostgreSQL's identifier limit (MySQL allows 64). */
export const MAX_TABLE_LENGTH = 63;

/** One resource a fenced transaction writes, and the lock holder's fencing token. */
export interface Fence {
  /**
   * The resource's name: a non-empty string of at most 1024 UTF-8 bytes,
   * namespaced by the caller (`invoice:42`), compared byte for byte.
   */
  readonly resource: string;
  /**
   * The holder's fencing token: `lease.token` of a holdfast lock, read-write
   * lock, semaphore permit or Redlock; `multiLease.tokens.get(name)`; an
   * election's `term.epoch`; any other number that grows with each new holder. Any non-negative safe
   * integer; one resource is fenced with the tokens of one lock.
   */
  readonly token: number;
}

/** Options every call of `@holdfast/fence/pg` and `@holdfast/fence/mysql` takes. */
export interface FenceOptions {
  /**
   * The fence table: a plain identifier (a letter or `_`, then letters,
   * digits or `_`) of at most 63 characters, used exactly as given (quoted).
   * @default 'holdfast_fences'
   */
  readonly table?: string | undefined;
}

// An unpaired UTF-16 surrogate would reach the database as U+FFFD: two names, one row.
const LONE_SURROGATE = /\p{Cs}/u;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol' || typeof value === 'function') return String(typeof value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Throws the one validation phrasing holdfast uses everywhere. */
export function fail(what: string, expected: string, value: unknown): never {
  throw new InvalidArgumentError(`Expected \`${what}\` to be ${expected}, got \`${show(value)}\``);
}

/** The table name of `options`, validated; the only text of SQL that comes from the caller. */
export function tableOf(options: FenceOptions | undefined | null): string {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    fail('options', 'an object', options);
  }
  const table = options?.table ?? DEFAULT_TABLE;
  if (typeof table !== 'string' || table.length > MAX_TABLE_LENGTH || !IDENTIFIER.test(table)) {
    fail('table', `a plain identifier of at most ${MAX_TABLE_LENGTH} characters (a letter or \`_\`, then letters, digits or \`_\`)`, table);
  }
  return table;
}

export function resourceOf(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) fail('resource', 'a non-empty string', value);
  if (LONE_SURROGATE.test(value) || value.includes('\u0000')) {
    fail('resource', 'a well-formed string without U+0000 (no unpaired UTF-16 surrogate)', value);
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_RESOURCE_BYTES) {
    throw new InvalidArgumentError(`Expected \`resource\` to be at most ${MAX_RESOURCE_BYTES} bytes, got ${bytes} bytes`);
  }
  return value;
}

/**
 * The resource as the fence table stores and compares it: its UTF-8 bytes,
 * bound as bytes and never as text, so that no connection character set
 * (mysql2's `charset`, PostgreSQL's `client_encoding`) converts it on the way:
 * one resource is one row, through every connection.
 */
export function keyOf(resource: string): Buffer {
  return Buffer.from(resource, 'utf8');
}

function tokenOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) fail('token', 'a non-negative integer', value);
  if (value > Number.MAX_SAFE_INTEGER) fail('token', `at most ${Number.MAX_SAFE_INTEGER}`, value);
  return value;
}

/**
 * The fences of one call, validated and in the one global order every call
 * takes fence rows in (ascending by the resource's UTF-8 bytes, the order
 * both databases' binary keys sort in): two transactions over overlapping
 * resources then wait for each other in a line, never in a cycle.
 */
export function fencesOf(value: unknown): Fence[] {
  const list: unknown[] = Array.isArray(value) ? value : [value];
  if (list.length === 0) fail('fences', 'a `{ resource, token }` or a non-empty array of them', value);
  const fences = list.map((item) => {
    if (typeof item !== 'object' || item === null) fail('fences', 'a `{ resource, token }` or a non-empty array of them', item);
    const { resource, token } = item as Record<string, unknown>;
    const name = resourceOf(resource);
    return { resource: name, token: tokenOf(token), key: Buffer.from(name, 'utf8') };
  });
  fences.sort((a, b) => Buffer.compare(a.key, b.key));
  for (let i = 1; i < fences.length; i++) {
    if (Buffer.compare(fences[i - 1]!.key, fences[i]!.key) === 0) {
      fail('fences', 'a list naming each resource once', fences[i]!.resource);
    }
  }
  return fences.map(({ resource, token }) => ({ resource, token }));
}

/** A stored token as a number: pg reads `bigint` as a string, mysql2 as a number or (by option) a string. */
export function storedToken(value: unknown): number {
  const token = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(token)) throw new TypeError(`The fence table holds a token that is not a safe integer: ${String(value)}`);
  return token;
}

export function checkFn(fn: unknown): void {
  if (typeof fn !== 'function') fail('fn', 'a function', fn);
}
