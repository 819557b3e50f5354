import { callRedis, randomId, replies, withTimeout, type TimeoutQueue } from '@holdfast/core/internal';
import { acquireOn, dropOneInBackground, extendOn, raiseOn, releaseTo } from './calls.js';
import type { RedlockContext } from './context.js';
import { QuorumError, type InstanceOutcome, type QuorumOperation } from './errors.js';
import { Collector, fanOutTo, type Answer, type AnswerSink, type FanOutOptions, type FanOutResult } from './fan-out.js';
import type { RedlockHold } from './hold.js';
import { failedCalls, lostReason, notHeldReason, verdictBy, type Tally } from './quorum.js';
import { restoreInBackground } from './restore.js';

/** Result of an operation on a held lock: done, or the lock is no longer ours. */
export type HoldOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: 'deleted' | 'taken' };

type Reply =
  | { readonly held: true; readonly count?: number }
  | { readonly held: false; readonly reason: 'deleted' | 'taken' };

const classify = (instance: number, reply: Reply): InstanceOutcome =>
  reply.held ? { instance, status: 'ok' } : { instance, status: 'not-held', reason: reply.reason };

/**
 * How an operation on a held lock is sent to every instance: decided as soon
 * as a majority said yes or so many said "not ours" that none can.
 */
function onHold(ctx: RedlockContext, onLate?: (i: number, answer: Answer<Reply>) => void): FanOutOptions<Reply> {
  const { quorum } = ctx;
  const n = ctx.instances.length;
  return {
    timeoutMs: ctx.options.instanceTimeoutMs,
    timeouts: ctx.timeouts,
    classify,
    decided: (_, counts) => verdictBy(counts, n, quorum) !== 'unknown',
    onLate,
  };
}

/**
 * The majority's verdict on an operation on a held lock: `ok`, lost (a
 * majority can no longer be ours), or a QuorumError (too few answers to
 * tell). Judged from the counts the fan-out kept, in the step that settles
 * it (the release round's `finished`, the caller's own step after the others).
 */
function verdictOn(ctx: RedlockContext, hold: RedlockHold, operation: QuorumOperation, { outcomes, counts }: { readonly outcomes: readonly InstanceOutcome[]; readonly counts: Tally }): HoldOutcome | QuorumError {
  const { quorum } = ctx;
  const verdict = verdictBy(counts, outcomes.length, quorum);
  if (verdict === 'ok') return OK;
  if (verdict === 'lost') return { ok: false, reason: lostReason(outcomes) };
  return new QuorumError({ lockName: hold.name, operation, reason: failedCalls(outcomes), quorum, outcomes });
}

const OK: HoldOutcome = { ok: true };

/** An inner release's answer for an instance that has the outer hold only. */
const SINGLE: replies.ReleaseReply = { ok: true, remaining: 1 };

function settled(outcome: HoldOutcome | QuorumError): HoldOutcome {
  if (outcome instanceof QuorumError) throw outcome;
  return outcome;
}

const fromAcquire = (r: replies.AcquireReply): Reply =>
  r.granted
    ? { held: true, count: r.holdCount }
    : { held: false, reason: 'lost' in r ? notHeldReason(r.lost) : 'taken' };
const fromExtend = (r: replies.ExtendReply): Reply =>
  r.ok ? { held: true } : { held: false, reason: notHeldReason(r.reason) };

/**
 * One more hold for the same owner on every instance ('reenter' never takes a
 * free lock). Needs a majority; when it fails, the instances that did count
 * the hold drop it again, now or when their late answer arrives.
 */
export async function reenterQuorum(ctx: RedlockContext, hold: RedlockHold, leaseMs: number): Promise<HoldOutcome> {
  const requestId = randomId();
  let kept: boolean | undefined;
  const waiting: [number, Answer<Reply>][] = [];
  const judge = (i: number, answer: Answer<Reply>) => {
    if (answer.state !== 'ok' || !answer.value.held) return;
    if (kept === undefined) waiting.push([i, answer]);
    else if (!kept || hold.ended) dropOneInBackground(ctx, i, hold.keys, hold.owner);
    else hold.counts[i] = answer.value.count;
  };
  const send = (i: number, sink: AnswerSink<Reply>) =>
    acquireOn(ctx, i, hold.keys, hold.owner, leaseMs, requestId, 'reenter').then(
      (reply) => sink.ok(i, fromAcquire(reply)),
      (error: unknown) => sink.fail(i, error),
    );
  const result = await fanOutTo(ctx.instances.length, send, onHold(ctx, judge));
  const { answers } = result;
  const outcome = verdictOn(ctx, hold, 'reenter', result);
  kept = !(outcome instanceof QuorumError) && outcome.ok;
  answers.forEach((answer, i) => judge(i, answer));
  for (const [i, answer] of waiting.splice(0)) judge(i, answer);
  return settled(outcome);
}

/**
 * Drops one hold (or, for the last one, every hold of the owner) on every
 * instance. An instance that never confirmed the hold's fencing token gets
 * it first: a release must not let a later owner draw a smaller token there.
 * An inner release skips instances known to have a single hold: the re-entry
 * did not reach them, and dropping it would free them too early.
 */
export function releaseQuorum(ctx: RedlockContext, hold: RedlockHold, final: boolean): Promise<HoldOutcome> {
  // A plain function, the release round an object, not async functions: a
  // release runs once per Redlock cycle, and each async frame on its path is
  // one more for V8 to resume every cycle and to compile in a process's first
  // thousand. What throws here is a rejection all the same (close() maps over it).
  let granting: Promise<unknown> | undefined;
  try {
    granting = grantsOnTheirWay(ctx, hold);
    if (granting === undefined) return new ReleaseRound(ctx, hold, final).result;
  } catch (error) {
    return Promise.reject(error);
  }
  return granting.then(() => new ReleaseRound(ctx, hold, final).result);
}

/**
 * Grants still on their way (the round was decided without them) may have
 * drawn the token themselves, which makes their raise needless: from a
 * connected instance, their answers are due before any release could come
 * back, so a release waits for them (bounded; never for an instance whose
 * connection is down). Then every release goes out at once, before the
 * caller's next acquisition: a release that waited for a raise would reach
 * its instance after that acquisition, which would find the lock still held
 * there. Undefined when there is nothing to wait for.
 */
function grantsOnTheirWay(ctx: RedlockContext, hold: RedlockHold): Promise<unknown> | undefined {
  let pending: Promise<unknown>[] | undefined;
  for (let i = 0; i < hold.granting.length; i++) {
    const call = hold.granting[i];
    if (call !== undefined && !hold.raised[i] && hold.counts[i] === undefined && ctx.instances[i]!.status() === 'ready') {
      (pending ??= []).push(call);
    }
  }
  if (pending === undefined) return undefined;
  const all = Promise.allSettled(pending);
  const { instanceTimeoutMs } = ctx.options;
  return ctx.timeouts?.ms === instanceTimeoutMs
    ? settledWithin(ctx.timeouts, all)
    : withTimeout(all, instanceTimeoutMs).catch(() => undefined);
}

/**
 * A release sent to every instance at once (raising the token first where it
 * was never confirmed), judged by majority: its own fan-out (see Collector),
 * each answer recording the holds left on its instance, late ones too.
 */
class ReleaseRound extends Collector<replies.ReleaseReply, HoldOutcome> {
  readonly #ctx: RedlockContext;
  readonly #hold: RedlockHold;
  readonly #final: boolean;

  constructor(ctx: RedlockContext, hold: RedlockHold, final: boolean) {
    const n = ctx.instances.length;
    super(n, ctx.options.instanceTimeoutMs, ctx.timeouts, false);
    this.#ctx = ctx;
    this.#hold = hold;
    this.#final = final;
    this.start(n);
  }

  protected send(i: number): void {
    const ctx = this.#ctx;
    const hold = this.#hold;
    // Answers come from a handler, never from here: every release is sent before any counts.
    if (!this.#final && hold.counts[i] === 1) {
      void Promise.resolve().then(() => this.ok(i, SINGLE));
      return;
    }
    // The usual case, the token confirmed there: the release alone, its answer read in its own handler.
    if (hold.raised[i]) {
      void releaseTo(ctx, i, hold.keys, hold.owner, this.#final, hold.takenOn[i], this);
      return;
    }
    const { commandTimeoutMs } = ctx.options;
    void callRedis(() => raiseOn(ctx, i, hold.keys, hold.owner, hold.token), { commandTimeoutMs, retries: 0 }).then(
      () => {
        hold.raised[i] = true;
        return releaseTo(ctx, i, hold.keys, hold.owner, this.#final, hold.takenOn[i], this);
      },
      (error: unknown) => this.fail(i, error),
    );
  }

  protected classify(instance: number, reply: replies.ReleaseReply): InstanceOutcome {
    this.#record(instance, reply);
    return reply.ok ? { instance, status: 'ok' } : { instance, status: 'not-held', reason: notHeldReason(reply.reason) };
  }

  protected decided(): boolean {
    return verdictBy(this.tally, this.outcomes.length, this.#ctx.quorum) !== 'unknown';
  }

  protected late(instance: number, answer: Answer<replies.ReleaseReply>): void {
    if (answer.state === 'ok') this.#record(instance, answer.value);
  }

  /** The holds the owner has left on an instance, as its answer says (unknown once "not ours"). */
  #record(instance: number, reply: replies.ReleaseReply): void {
    this.#hold.counts[instance] = reply.ok ? reply.remaining : undefined;
  }

  protected finished(): void {
    const outcome = verdictOn(this.#ctx, this.#hold, 'release', { outcomes: this.outcomes, counts: this.tally });
    if (outcome instanceof QuorumError) this.rejectWith(outcome);
    else this.resolveWith(outcome);
  }
}

/**
 * Sets the remaining lease on every instance that holds it; needs a majority.
 * Extended, the hold is then put back on the instances that answered "gone",
 * even late (see restore.ts), never on those that answered "taken".
 */
export async function extendQuorum(ctx: RedlockContext, hold: RedlockHold, leaseMs: number): Promise<HoldOutcome> {
  const calls: Promise<Reply>[] = [];
  const send = (i: number, sink: AnswerSink<Reply>) =>
    (calls[i] = extendOn(ctx, i, hold.keys, hold.owner, leaseMs).then(fromExtend)).then(
      (reply) => sink.ok(i, reply),
      (error: unknown) => sink.fail(i, error),
    );
  const outcome = verdictOn(ctx, hold, 'extend', await fanOutTo(ctx.instances.length, send, onHold(ctx)));
  if (!(outcome instanceof QuorumError) && outcome.ok) {
    calls.forEach((call, i) =>
      call.then(
        (reply) => {
          if (!reply.held && reply.reason === 'deleted') restoreInBackground(ctx, hold, i);
        },
        () => undefined,
      ),
    );
  }
  return settled(outcome);
}

/** Resolves once `work` settles or `timeouts.ms` passed, whichever comes first; never rejects. */
function settledWithin(timeouts: TimeoutQueue, work: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const entry = timeouts.add(resolve);
    const done = () => {
      timeouts.cancel(entry);
      resolve();
    };
    work.then(done, done);
  });
}
