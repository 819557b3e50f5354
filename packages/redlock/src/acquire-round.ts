import { performance } from 'node:perf_hooks';
import { KeyConflictError } from '@holdfast/core';
import { randomId, replies, type LockKeys } from '@holdfast/core/internal';
import { acquireTo, dropOwnerInBackground, raiseOn, TakeRound, takeTo } from './calls.js';
import type { RedlockContext } from './context.js';
import { QuorumError, type InstanceOutcome } from './errors.js';
import { fanOut, fanOutTo, type Answer, type AnswerSink } from './fan-out.js';
import { filled, type RedlockHold } from './hold.js';
import {
  acquireFailure,
  decidedBy,
  failedCalls,
  isUsable,
  notHeldReason,
  retryAfterMs,
  tally,
  validityMs,
} from './quorum.js';

export interface RoundRequest {
  readonly name: string;
  readonly keys: LockKeys;
  /** Fresh for every round, so undoing a failed round can only ever touch that round's grants. */
  readonly owner: string;
  readonly leaseMs: number;
  /**
   * The caller listens on the lock's channel and sleeps until a release is
   * published: each instance gets acquire.lua's 'try', which marks a busy
   * holder's hash so that its release publishes. Otherwise take.lua, which
   * writes nothing when busy.
   */
  readonly watching: boolean;
}

export type RoundResult =
  | {
      readonly won: true;
      readonly token: number;
      readonly validityMs: number;
      /** Monotonic time the round was sent: the lease runs from no earlier than this. */
      readonly startedAt: number;
      readonly attempt: Attempt;
    }
  | {
      readonly won: false;
      readonly error: QuorumError;
      readonly retryAfterMs: number;
      /** Some instance granted: competing clients split the votes. */
      readonly split: boolean;
    };

/**
 * What one round left on the instances. Grants that arrive after the round
 * was decided are recorded while the hold they belong to lives, and undone
 * otherwise.
 */
export class Attempt {
  state: 'open' | 'won' | 'failed' = 'open';
  hold: RedlockHold | undefined;
  readonly counts: (number | undefined)[];
  readonly raised: boolean[];
  /** The string lock take.lua wrote on each instance where it granted this owner's hold (its last release there tries release-taken.lua with it). */
  readonly takenOn: (string | undefined)[];
  /** The round's token once decided: a late grant at or above it needs no raise on its instance. */
  token: number | undefined;
  /** Each instance's acquire call, answered or not: a release waits for one still on its way (releaseQuorum). */
  readonly calls: Promise<unknown>[] = [];
  readonly #ctx: RedlockContext;
  readonly #req: RoundRequest;
  /** Token each instance's grant drew from its counter, late grants included. */
  readonly #drawn: (number | undefined)[];

  constructor(ctx: RedlockContext, req: RoundRequest) {
    this.#ctx = ctx;
    this.#req = req;
    const n = ctx.instances.length;
    this.counts = filled<number | undefined>(n, undefined);
    this.raised = filled(n, false);
    this.takenOn = filled<string | undefined>(n, undefined);
    this.#drawn = filled<number | undefined>(n, undefined);
  }

  lateGrant(i: number, answer: Answer<replies.AcquireReply>): void {
    if (answer.state !== 'ok' || !answer.value.granted) return;
    if (this.state === 'failed' || this.hold?.ended === true) {
      dropOwnerInBackground(this.#ctx, i, this.#req.keys, this.#req.owner);
    } else {
      this.counts[i] = answer.value.holdCount;
      this.#drawn[i] = answer.value.token;
      if (this.token !== undefined && answer.value.token >= this.token) this.raised[i] = true;
    }
  }

  /**
   * The round's token, decided. Every instance that granted with a token at
   * least this large has its counter there already: it needs no raise.
   */
  decide(token: number, outcomes: readonly InstanceOutcome[]): number {
    this.token = token;
    for (const o of outcomes) if (o.status === 'granted') this.#drawn[o.instance] = o.token;
    let atToken = 0;
    for (let i = 0; i < this.#drawn.length; i++) {
      const drawn = this.#drawn[i];
      if (drawn !== undefined && drawn >= token) {
        this.raised[i] = true;
        atToken++;
      }
    }
    return atToken;
  }

  /** Undo every grant of this round, now and as late ones arrive. */
  abandon(): void {
    this.state = 'failed';
    this.counts.forEach((count, i) => {
      if (count !== undefined) dropOwnerInBackground(this.#ctx, i, this.#req.keys, this.#req.owner);
    });
  }
}

function classifyGrant(instance: number, reply: replies.AcquireReply, name: string): InstanceOutcome {
  if (reply.granted) return { instance, status: 'granted', token: reply.token };
  if ('lost' in reply) return { instance, status: 'not-held', reason: notHeldReason(reply.lost) };
  // Data holdfast did not write at the lock key: that instance can never grant it.
  if ('conflict' in reply) return { instance, status: 'error', error: new KeyConflictError(name), timedOut: false, replied: true };
  return { instance, status: 'busy', pttl: reply.retryAfterMs };
}

/** A lost round: its grants are undone, and the caller learns when to retry. */
function lost(
  attempt: Attempt,
  req: RoundRequest,
  quorum: number,
  granted: number,
  error: { operation: 'acquire' | 'fence'; reason: QuorumError['reason']; outcomes: readonly InstanceOutcome[]; validityMs?: number },
  grantOutcomes: readonly InstanceOutcome[],
): RoundResult {
  attempt.abandon();
  return {
    won: false,
    error: new QuorumError({ lockName: req.name, quorum, ...error }),
    retryAfterMs: retryAfterMs(grantOutcomes, quorum),
    split: granted > 0,
  };
}

/**
 * One Redlock round: 'try' on every instance in parallel; with a majority of
 * grants, the largest token is raised on a majority (raise-fence) before the
 * lease counts, unless a majority granted with that very token (their
 * counters are at it already: the usual case, counters move in step while
 * every instance grants every lease); the validity left must then still be
 * usable. A round that fails undoes its grants in the background.
 */
export async function acquireRound(ctx: RedlockContext, req: RoundRequest): Promise<RoundResult> {
  const { quorum, options } = ctx;
  const n = ctx.instances.length;
  const attempt = new Attempt(ctx, req);
  const startedAt = performance.now();
  const requestId = randomId();

  const take = req.watching ? undefined : new TakeRound(ctx, req.keys, req.owner, req.leaseMs, requestId, attempt.takenOn);
  const send = (i: number, sink: AnswerSink<replies.AcquireReply>): Promise<unknown> =>
    (attempt.calls[i] =
      take === undefined
        ? acquireTo(ctx, i, req.keys, req.owner, req.leaseMs, requestId, 'try', sink)
        : takeTo(ctx, i, take, sink));
  const grants = await fanOutTo(n, send, {
    timeoutMs: options.instanceTimeoutMs,
    timeouts: ctx.timeouts,
    strict: true,
    classify: (i, reply) => classifyGrant(i, reply, req.name),
    decided: (_, counts) => decidedBy(counts, quorum),
    onLate: (i, answer) => attempt.lateGrant(i, answer),
  });
  // The fencing token is the largest granted (as fencingToken in quorum.ts), found in the same pass.
  let token = -Infinity;
  let granted = 0;
  for (const o of grants.outcomes) {
    if (o.status === 'granted') {
      granted++;
      if (o.token > token) token = o.token;
      attempt.counts[o.instance] = 1;
    }
  }
  const outcomes = grants.outcomes;
  if (granted < quorum) {
    const reason = acquireFailure(outcomes, quorum);
    return lost(attempt, req, quorum, granted, { operation: 'acquire', reason, outcomes }, outcomes);
  }
  let validity = validityMs(req.leaseMs, performance.now() - startedAt, options.driftFactor);
  if (!isUsable(validity, options.instanceTimeoutMs)) {
    return lost(attempt, req, quorum, granted, { operation: 'acquire', reason: 'too-slow', outcomes, validityMs: validity }, outcomes);
  }

  // A grant drew its token from the instance's counter (INCR, atomically with
  // the grant): where it drew `token` itself, that counter is at `token`
  // already. With a majority of those, any later majority overlaps one of
  // them and the raise round would change nothing: it is skipped. Instances
  // that drew less get the raise before their release (releaseQuorum).
  if (attempt.decide(token, outcomes) >= quorum) {
    attempt.state = 'won';
    return { won: true, token, validityMs: validity, startedAt, attempt };
  }

  // Raised everywhere, needed on a majority: any later majority overlaps it.
  const raise = await fanOut(n, (i) => raiseOn(ctx, i, req.keys, req.owner, token), {
    timeoutMs: options.instanceTimeoutMs,
    timeouts: ctx.timeouts,
    classify: (instance) => ({ instance, status: 'ok' }),
    decided: (_, counts) => decidedBy(counts, quorum),
    onLate: (i, answer) => {
      if (answer.state === 'ok') attempt.raised[i] = true;
    },
  });
  for (const o of raise.outcomes) if (o.status === 'ok') attempt.raised[o.instance] = true;
  if (tally(raise.outcomes).yes < quorum) {
    const reason = failedCalls(raise.outcomes);
    return lost(attempt, req, quorum, granted, { operation: 'fence', reason, outcomes: raise.outcomes }, outcomes);
  }
  validity = validityMs(req.leaseMs, performance.now() - startedAt, options.driftFactor);
  if (!isUsable(validity, options.instanceTimeoutMs)) {
    return lost(attempt, req, quorum, granted, { operation: 'acquire', reason: 'too-slow', outcomes, validityMs: validity }, outcomes);
  }
  attempt.state = 'won';
  return { won: true, token, validityMs: validity, startedAt, attempt };
}
