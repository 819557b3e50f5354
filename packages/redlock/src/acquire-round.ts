import { performance } from 'node:perf_hooks';
import { KeyConflictError } from '@holdfast/core';
import { randomId, replies, takeCall, type LockKeys } from '@holdfast/core/internal';
import { acquireTo, dropOwnerInBackground, raiseOn, takeTo, type TakeCall, type TakeSink } from './calls.js';
import type { RedlockContext } from './context.js';
import { QuorumError, type InstanceOutcome } from './errors.js';
import { Collector, fanOut, type Answer } from './fan-out.js';
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

/** What a round asks for; a new owner (`owner`) for every round, so undoing a failed round can only ever touch that round's grants. */
export interface RoundRequest {
  readonly name: string;
  readonly keys: LockKeys;
  readonly leaseMs: number;
}

export type RoundResult =
  | {
      readonly won: true;
      readonly token: number;
      readonly validityMs: number;
      /** Monotonic time the round was sent: the lease runs from no earlier than this. */
      readonly startedAt: number;
      /** The round, and what it left on the instances (its owner is the hold's). */
      readonly attempt: GrantRound;
    }
  | {
      readonly won: false;
      readonly error: QuorumError;
      readonly retryAfterMs: number;
      /** Some instance granted: competing clients split the votes. */
      readonly split: boolean;
    };

function classifyGrant(instance: number, reply: replies.AcquireReply, name: string): InstanceOutcome {
  if (reply.granted) return { instance, status: 'granted', token: reply.token };
  if ('lost' in reply) return { instance, status: 'not-held', reason: notHeldReason(reply.lost) };
  // Data holdfast did not write at the lock key: that instance can never grant it.
  if ('conflict' in reply) return { instance, status: 'error', error: new KeyConflictError(name), timedOut: false, replied: true };
  return { instance, status: 'busy', pttl: reply.retryAfterMs };
}

/**
 * One Redlock round for `owner`: 'try' on every instance in parallel; with a majority of
 * grants, the largest token is raised on a majority (raise-fence) before the
 * lease counts, unless a majority granted with that very token (their
 * counters are at it already: the usual case, counters move in step while
 * every instance grants every lease); the validity left must then still be
 * usable. A round that fails undoes its grants in the background.
 */
export function acquireRound(ctx: RedlockContext, req: RoundRequest, owner: string, watching: boolean): Promise<RoundResult> {
  return new GrantRound(ctx, req, owner, watching).result;
}

/**
 * One round, from its sends to its result, and what it left on the
 * instances: grants that arrive after the round was decided are recorded
 * while the hold they belong to lives, and undone otherwise. The round is
 * its own fan-out (see Collector) and the sink of its calls' answers: the
 * usual round is this object's methods, run from the answers' handlers.
 */
export class GrantRound extends Collector<replies.AcquireReply, RoundResult> implements TakeSink {
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
  readonly keys: LockKeys;
  readonly owner: string;
  readonly leaseMs: number;
  readonly requestId: string;
  readonly #ctx: RedlockContext;
  /** The lock's name, for the errors. */
  readonly #name: string;
  /** take.lua's call; undefined when the caller is watching (acquire.lua's 'try'). */
  readonly #take: TakeCall | undefined;
  /** Token each instance's grant drew from its counter, late grants included. */
  readonly #drawn: (number | undefined)[];

  /**
   * @param watching the caller listens on the lock's channel and sleeps until
   * a release is published: each instance gets acquire.lua's 'try', which
   * marks a busy holder's hash so that its release publishes. Otherwise
   * take.lua, which writes nothing when busy.
   */
  constructor(ctx: RedlockContext, req: RoundRequest, owner: string, watching: boolean) {
    const n = ctx.instances.length;
    super(n, ctx.options.instanceTimeoutMs, ctx.timeouts, true);
    this.#ctx = ctx;
    this.#name = req.name;
    this.keys = req.keys;
    this.owner = owner;
    this.leaseMs = req.leaseMs;
    this.counts = filled<number | undefined>(n, undefined);
    this.raised = filled(n, false);
    this.takenOn = filled<string | undefined>(n, undefined);
    this.#drawn = filled<number | undefined>(n, undefined);
    this.requestId = randomId();
    this.#take = watching ? undefined : takeCall(req.keys, owner, this.requestId, req.leaseMs);
    this.start(n);
  }

  protected send(i: number): void {
    const take = this.#take;
    this.calls[i] =
      take === undefined
        ? acquireTo(this.#ctx, i, this.keys, this.owner, this.leaseMs, this.requestId, 'try', this)
        : takeTo(this.#ctx, i, take, this);
  }

  protected classify(i: number, reply: replies.AcquireReply): InstanceOutcome {
    return classifyGrant(i, reply, this.#name);
  }

  protected decided(): boolean {
    return decidedBy(this.tally, this.#ctx.quorum);
  }

  /** Instance `i` granted and wrote the string lock `hint`. */
  taken(i: number, hint: string): void {
    this.takenOn[i] = hint;
  }

  protected late(i: number, answer: Answer<replies.AcquireReply>): void {
    if (answer.state !== 'ok' || !answer.value.granted) return;
    if (this.state === 'failed' || this.hold?.ended === true) {
      dropOwnerInBackground(this.#ctx, i, this.keys, this.owner);
    } else {
      this.counts[i] = answer.value.holdCount;
      this.#drawn[i] = answer.value.token;
      if (this.token !== undefined && answer.value.token >= this.token) this.raised[i] = true;
    }
  }

  protected finished(): void {
    try {
      this.resolveWith(this.#outcome());
    } catch (error) {
      this.rejectWith(error);
    }
  }

  /** The round decided by its grants: won, lost, or a raise round first. */
  #outcome(): RoundResult | Promise<RoundResult> {
    const { quorum, options } = this.#ctx;
    const { outcomes } = this;
    // The fencing token is the largest granted (as fencingToken in quorum.ts), found in the same pass.
    let token = -Infinity;
    let granted = 0;
    for (const o of outcomes) {
      if (o.status === 'granted') {
        granted++;
        if (o.token > token) token = o.token;
        this.counts[o.instance] = 1;
      }
    }
    if (granted < quorum) return this.lost(granted, { operation: 'acquire', reason: acquireFailure(outcomes, quorum), outcomes });
    const validity = validityMs(this.leaseMs, performance.now() - this.startedAt, options.driftFactor);
    if (!isUsable(validity, options.instanceTimeoutMs)) {
      return this.lost(granted, { operation: 'acquire', reason: 'too-slow', outcomes, validityMs: validity });
    }
    // A grant drew its token from the instance's counter (INCR, atomically with
    // the grant): where it drew `token` itself, that counter is at `token`
    // already. With a majority of those, any later majority overlaps one of
    // them and the raise round would change nothing: it is skipped. Instances
    // that drew less get the raise before their release (releaseQuorum).
    if (this.#decide(token) >= quorum) {
      this.state = 'won';
      return { won: true, token, validityMs: validity, startedAt: this.startedAt, attempt: this };
    }
    return raiseRound(this.#ctx, this, granted, token);
  }

  /**
   * The round's token, decided. Every instance that granted with a token at
   * least this large has its counter there already: it needs no raise.
   */
  #decide(token: number): number {
    this.token = token;
    for (const o of this.outcomes) if (o.status === 'granted') this.#drawn[o.instance] = o.token;
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

  /** A lost round: its grants are undone, and the caller learns when to retry. */
  lost(
    granted: number,
    error: { operation: 'acquire' | 'fence'; reason: QuorumError['reason']; outcomes: readonly InstanceOutcome[]; validityMs?: number },
  ): RoundResult {
    this.abandon();
    const { quorum } = this.#ctx;
    return {
      won: false,
      error: new QuorumError({ lockName: this.#name, quorum, ...error }),
      retryAfterMs: retryAfterMs(this.outcomes, quorum),
      split: granted > 0,
    };
  }

  /** Undo every grant of this round, now and as late ones arrive. */
  abandon(): void {
    this.state = 'failed';
    this.counts.forEach((count, i) => {
      if (count !== undefined) dropOwnerInBackground(this.#ctx, i, this.keys, this.owner);
    });
  }
}

/** Raised everywhere, needed on a majority: any later majority overlaps it. */
async function raiseRound(ctx: RedlockContext, round: GrantRound, granted: number, token: number): Promise<RoundResult> {
  const { quorum, options } = ctx;
  const n = ctx.instances.length;
  const raise = await fanOut(n, (i) => raiseOn(ctx, i, round.keys, round.owner, token), {
    timeoutMs: options.instanceTimeoutMs,
    timeouts: ctx.timeouts,
    classify: (instance) => ({ instance, status: 'ok' }),
    decided: (_, counts) => decidedBy(counts, quorum),
    onLate: (i, answer) => {
      if (answer.state === 'ok') round.raised[i] = true;
    },
  });
  for (const o of raise.outcomes) if (o.status === 'ok') round.raised[o.instance] = true;
  if (tally(raise.outcomes).yes < quorum) {
    return round.lost(granted, { operation: 'fence', reason: failedCalls(raise.outcomes), outcomes: raise.outcomes });
  }
  const validity = validityMs(round.leaseMs, performance.now() - round.startedAt, options.driftFactor);
  if (!isUsable(validity, options.instanceTimeoutMs)) {
    return round.lost(granted, { operation: 'acquire', reason: 'too-slow', outcomes: round.outcomes, validityMs: validity });
  }
  round.state = 'won';
  return { won: true, token, validityMs: validity, startedAt: round.startedAt, attempt: round };
}
