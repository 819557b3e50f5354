import { RedisCommandError } from './errors.js';
import type { LostReason } from './errors.js';

/**
 * Every script reply is decoded here, in one place, into plain outcomes the
 * rest of the code switches on. A reply of the wrong shape is a bug or a
 * foreign script under our keys: it becomes a RedisCommandError.
 */

export type AcquireReply =
  | { readonly granted: true; readonly token: number; readonly holdCount: number; readonly pttl: number }
  | { readonly granted: false; readonly retryAfterMs: number }
  | { readonly granted: false; readonly lost: LostReason };

export type ReleaseReply =
  | { readonly ok: true; readonly remaining: number }
  | { readonly ok: false; readonly reason: LostReason };

export type ExtendReply = { readonly ok: true } | { readonly ok: false; readonly reason: LostReason };

function malformed(script: string, reply: unknown): RedisCommandError {
  return new RedisCommandError(`Unexpected reply from the ${script} script: ${JSON.stringify(reply)}`);
}

function ints(script: string, reply: unknown): number[] {
  if (!Array.isArray(reply) || reply.some((v) => typeof v !== 'number')) throw malformed(script, reply);
  return reply as number[];
}

/** -1: the key is gone; -2: another owner holds it. */
function lostReason(code: number): LostReason | undefined {
  if (code === -1) return 'deleted';
  if (code === -2) return 'taken';
  return undefined;
}

export function acquireReply(reply: unknown): AcquireReply {
  const r = ints('acquire', reply);
  if (r[0] === 1 && r.length === 4) {
    return { granted: true, token: r[1]!, holdCount: r[2]!, pttl: r[3]! };
  }
  if (r[0] === 0 && r.length === 2) return { granted: false, retryAfterMs: r[1]! };
  const reason = lostReason(r[0]!);
  if (reason) return { granted: false, lost: reason };
  throw malformed('acquire', reply);
}

export function releaseReply(reply: unknown): ReleaseReply {
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
  return r.map((code) => (code === 1 ? undefined : code === -2 ? 'taken' : 'deleted'));
}

export function inspectReply(reply: unknown): { pttl: number; token: number } {
  const r = ints('inspect', reply);
  if (r.length !== 2) throw malformed('inspect', reply);
  return { pttl: r[0]!, token: r[1]! };
}
