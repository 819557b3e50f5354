import type { AcquireContext } from './kind.js';
import type { Hold } from './hold.js';
import type { ExtendReply, ReleaseReply } from '../scripts/replies.js';

/**
 * What a release call came back with: the reply, and `resent` when the call
 * that decided was sent more than once (an earlier send may have been applied
 * before the one that answered: a send that timed out is not withdrawn).
 */
export interface ReleaseOutcome {
  readonly reply: ReleaseReply;
  readonly resent: boolean;
}

/**
 * One release through the hold's kind: drops one hold (or, with `all`, every
 * hold) of the hold's owner, and returns the outcome; the caller settles the
 * hold. It touches no hold state.
 */
export async function releaseHold(engine: AcquireContext, hold: Hold, all: boolean): Promise<ReleaseOutcome> {
  const sends = { count: 0 };
  const reply = await hold.kind.calls.release(engine, hold, all, sends);
  return { reply, resent: sends.count > 1 };
}

/** One extend call: sets the remaining lease of a lock the hold's owner holds. */
export function extendHold(engine: AcquireContext, hold: Hold, leaseMs: number): Promise<ExtendReply> {
  return hold.kind.calls.extend(engine, hold, leaseMs);
}
