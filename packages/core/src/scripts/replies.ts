import { KeyConflictError, RedisCommandError, type KeyConflictKind, type LostReason } from '../errors/errors.js';

/**
 * The codes scripts answer with, as a bare reply or an array's first element: -3 the key holds
 * data holdfast did not write (never modified) and -4 the count stored with the synchronizer
 * differs from the caller's, in every script; -1 the hold is gone and -2 another owner holds it,
 * in the lease kinds' scripts (a claim's scripts, run-once's and idempotency's, answer 0 for
 * gone and -1 for another owner's). Other codes mean what each script's header says.
 */
export const ReplyCode = { gone: -1, otherOwner: -2, foreign: -3, countMismatch: -4 } as const;

/**
 * The shared decode helpers, and the decoders of the replies every lease kind's scripts share
 * (acquire, release, extend, renew, inspect, force-release: the mutex's, the read-write lock's,
 * the semaphore's, the election's, Redlock's). A kind's own replies are decoded beside its
 * scripts, with these helpers. A reply of the wrong shape is a bug or a foreign script under our
 * keys: it becomes a RedisCommandError.
 */

export type AcquireReply =
  /** `releaseHint`: what the kind's release may send first (opaque outside the kind's calls: the mutex's take.lua grant). */
  | { readonly granted: true; readonly token: number; readonly holdCount: number; readonly pttl: number; readonly releaseHint?: string }
  /**
   * Busy. `serverMs`: the server time of a queued attempt ('join' mode); `place`: how near the
   * head of the queue it is (0 the head, 1 next, …, 8 for any place from there on; a mutex's
   * queued attempt says).
   */
  | { readonly granted: false; readonly retryAfterMs: number; readonly serverMs?: number; readonly place?: number }
  | { readonly granted: false; readonly lost: LostReason }
  /** The lock key holds data holdfast did not write. */
  | { readonly granted: false; readonly conflict: true };

export type ReleaseReply =
  | { readonly ok: true; readonly remaining: number }
  | { readonly ok: false; readonly reason: LostReason };

export type ExtendReply = { readonly ok: true } | { readonly ok: false; readonly reason: LostReason };

/** The error for a reply of the wrong shape from `script`. */
export function malformed(script: string, reply: unknown): RedisCommandError {
  return new RedisCommandError(`Unexpected reply from the ${script} script: ${JSON.stringify(reply)?.slice(0, 100)}`);
}

/**
 * A script's integer, whatever the client's reply options: ioredis with
 * `stringNumbers: true` returns integers as decimal strings.
 */
export function int(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value)) return Number(value);
  return undefined;
}

/** An array reply of integers, or the malformed-reply error. */
export function ints(script: string, reply: unknown): number[] {
  if (!Array.isArray(reply)) throw malformed(script, reply);
  const values = reply.map(int);
  if (values.some((v) => v === undefined)) throw malformed(script, reply);
  return values as number[];
}

/** An array reply with at least one element, or the malformed-reply error. */
export function arrayOf(script: string, reply: unknown): readonly unknown[] {
  if (!Array.isArray(reply) || reply.length === 0) throw malformed(script, reply);
  return reply;
}

/** Element `i` of an array reply as an integer, or the malformed-reply error. */
export function intAt(script: string, reply: readonly unknown[], i: number): number {
  const value = int(reply[i]);
  if (value === undefined) throw malformed(script, reply);
  return value;
}

/** An integer reply, or the malformed-reply error. */
export function intOf(script: string, reply: unknown): number {
  const value = int(reply);
  if (value === undefined) throw malformed(script, reply);
  return value;
}

/** Throws KeyConflictError when `code` says the key of `name` (a `kind`) holds foreign data; else `code`. */
export function unlessForeign(code: number, name: string, kind: KeyConflictKind): number {
  if (code === ReplyCode.foreign) throw new KeyConflictError(name, kind);
  return code;
}

/** What a lease makes of a code: foreign data at the key is as good as taken. */
export function lostReason(code: number): LostReason | undefined {
  if (code === ReplyCode.gone) return 'deleted';
  if (code === ReplyCode.otherOwner || code === ReplyCode.foreign) return 'taken';
  return undefined;
}

/** `leaseMs`: the lease the call asked for. A bare integer is a free lock taken: the token, one hold, the whole lease. */
export function acquireReply(reply: unknown, leaseMs?: number): AcquireReply {
  if (!Array.isArray(reply)) {
    const token = int(reply);
    if (token === undefined || token < 1 || leaseMs === undefined) throw malformed('acquire', reply);
    return { granted: true, token, holdCount: 1, pttl: leaseMs };
  }
  const r = ints('acquire', reply);
  if (r[0] === 1 && r.length === 4) {
    return { granted: true, token: r[1]!, holdCount: r[2]!, pttl: r[3]! };
  }
  if (r[0] === 0 && r.length === 2) return { granted: false, retryAfterMs: r[1]! };
  if (r[0] === 0 && r.length === 3) return { granted: false, retryAfterMs: r[1]!, serverMs: r[2]! };
  if (r[0] === 0 && r.length === 4) return { granted: false, retryAfterMs: r[1]!, serverMs: r[2]!, place: r[3]! };
  if (r[0] === ReplyCode.foreign && r.length === 1) return { granted: false, conflict: true };
  const reason = lostReason(r[0]!);
  if (reason) return { granted: false, lost: reason };
  throw malformed('acquire', reply);
}

/** A bare 0: the last hold dropped and the lock freed. */
export function releaseReply(reply: unknown): ReleaseReply {
  if (!Array.isArray(reply)) {
    if (int(reply) !== 0) throw malformed('release', reply);
    return { ok: true, remaining: 0 };
  }
  const r = ints('release', reply);
  if (r[0] === 1 && r.length === 2) return { ok: true, remaining: r[1]! };
  const reason = lostReason(r[0]!);
  if (reason) return { ok: false, reason };
  throw malformed('release', reply);
}

export function extendReply(reply: unknown): ExtendReply {
  const r = ints('extend', reply);
  if (r[0] === 1) return { ok: true };
  const reason = lostReason(r[0]!);
  if (reason) return { ok: false, reason };
  throw malformed('extend', reply);
}

/** One outcome per key of a renew call: undefined means renewed. */
export function renewReply(reply: unknown, count: number): ('deleted' | 'taken' | undefined)[] {
  const r = ints('renew', reply);
  if (r.length !== count) throw malformed('renew', reply);
  return r.map((code) => (code === 1 ? undefined : code === ReplyCode.otherOwner ? 'taken' : 'deleted'));
}

/** `token` 0: unknown; `foreign`: the key holds data holdfast did not write (busy, no token). */
export function inspectReply(reply: unknown): { pttl: number; token: number; foreign: boolean } {
  const r = ints('inspect', reply);
  if (r.length !== 2) throw malformed('inspect', reply);
  const foreign = r[1] === -1;
  return { pttl: r[0]!, token: foreign ? 0 : r[1]!, foreign };
}

/** 1 / 0: a lock was removed or not; -3: data holdfast did not write is at the key (left alone). */
export function forceReleaseReply(reply: unknown): { removed: boolean; foreign: boolean } {
  const code = int(reply);
  if (code === 1 || code === 0) return { removed: code === 1, foreign: false };
  if (code === ReplyCode.foreign) return { removed: false, foreign: true };
  throw malformed('force-release', reply);
}

export type MultiAcquireReply =
  | { readonly granted: true; readonly parts: readonly { readonly token: number; readonly holdCount: number }[] }
  /** Busy at `busyPart` (0-based); `serverMs`: the server time of a queued attempt ('join' mode). */
  | { readonly granted: false; readonly retryAfterMs: number; readonly busyPart: number; readonly serverMs?: number }
  /** The key of part `conflictPart` (0-based) holds data holdfast did not write. */
  | { readonly granted: false; readonly conflictPart: number };

/** multi-acquire.lua over `count` parts. */
export function multiAcquireReply(reply: unknown, count: number): MultiAcquireReply {
  const r = ints('multi-acquire', reply);
  if (r[0] === 1 && r.length === 1 + 2 * count) {
    const parts = [];
    for (let i = 0; i < count; i++) parts.push({ token: r[1 + 2 * i]!, holdCount: r[2 + 2 * i]! });
    return { granted: true, parts };
  }
  const part = r[2]! - 1;
  if (r[0] === 0 && (r.length === 3 || r.length === 4) && part >= 0 && part < count) {
    return r.length === 3
      ? { granted: false, retryAfterMs: r[1]!, busyPart: part }
      : { granted: false, retryAfterMs: r[1]!, busyPart: part, serverMs: r[3]! };
  }
  const conflict = r[1]! - 1;
  if (r[0] === ReplyCode.foreign && r.length === 2 && conflict >= 0 && conflict < count) return { granted: false, conflictPart: conflict };
  throw malformed('multi-acquire', reply);
}
