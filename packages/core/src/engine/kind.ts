import type { KeyConflictKind } from '../errors/errors.js';
import type { LockKeys } from '../keys/keys.js';
import type { RedisPort } from '../port/index.js';
import { callRedis, type CallPolicy } from '../port/redis-call.js';
import { extendReply, releaseReply, type AcquireReply, type ExtendReply, type ReleaseReply } from '../scripts/replies.js';
import { callGranting, runScript, type Replication, type Script } from '../scripts/index.js';
import type { Waiters } from './waiters.js';

/**
 * What a kind's calls and the shared acquisition path ask of the engine: the
 * client port and its call policy, pub/sub waiting, the hand-off and
 * replication settings. The engine is this object (see engine.ts); the type
 * names the part of it a call may use.
 */
export interface AcquireContext {
  /** The user's Redis client, behind the port. */
  readonly redis: RedisPort;
  /** How every call is bounded and retried. */
  readonly policy: CallPolicy;
  /** Pub/sub wake-ups, shared with every kind of the client. */
  readonly waiters: Waiters;
  readonly handoffTimeoutMs: number;
  /** Replica acknowledgements every granting write needs (`minReplicas`), if any. */
  readonly replication: Replication | undefined;
  /** Time kept back from a lease of `ms` for clock drift. */
  marginMs(ms: number): number;
  /** True once the client is closed. */
  isClosed(): boolean;
  /**
   * Undo whatever a request may have left behind (queue entry, unconfirmed
   * grant); without a request id, whatever the owner holds. Never rejects:
   * failures go to `onError`.
   */
  cancel(keys: LockKeys, owner: string, requestId: string | undefined, kind: LockKind): Promise<void>;
  /** Reports a background failure (the `error` event). */
  onError(error: unknown): void;
}

/** One acquisition, as the acquire loop runs it. */
export interface AcquireRequest {
  readonly name: string;
  readonly keys: LockKeys;
  readonly owner: string;
  readonly leaseMs: number;
  /** Monotonic ms; undefined waits without limit. */
  readonly deadline: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly mode: 'try' | 'wait' | 'reenter';
  /** Whose calls to run. */
  readonly kind: LockKind;
  /** Read-write lock: the owner id of the caller's enclosing write hold (a downgrade). */
  readonly via?: string;
  /** When the caller's wait began (monotonic ms), for the waited time a LockTimeoutError reports; default: when the loop starts. */
  readonly started?: number;
  /**
   * A clock reading (monotonic ms) taken before this call with nothing
   * awaited since: the first attempt counts as sent then, a little earlier
   * than it is (so its lease ends no later than Redis's). Undefined: the loop
   * reads the clock.
   */
  readonly now?: number;
}

/** What a kind's calls read of a hold (the engine's `Hold` has all of it). */
export interface HoldState {
  readonly name: string;
  readonly keys: LockKeys;
  readonly owner: string;
  /** What the kind's acquire call left for its release (`AcquireReply.releaseHint`). */
  readonly releaseHint: string | undefined;
}

/**
 * How many times a call was sent. More than once, an earlier send may have been
 * applied before the one that answered (a send that timed out is not withdrawn,
 * and the next one queues behind it on the same connection).
 */
export interface Sends {
  count: number;
}

/** `send`, counted in `sends` each time it runs (callRedis runs it again after a timeout). */
export function counted<T>(sends: Sends, send: () => Promise<T>): () => Promise<T> {
  return () => {
    sends.count++;
    return send();
  };
}

/**
 * A kind of hold, as the shared path (acquire loop, holds, lease operations,
 * renewal, loss) needs to know it: its Redis calls. Everything else (holds,
 * deadlines, hand-offs, request ids, renewal, loss, events) is the engine's,
 * the same for every kind. Each kind's folder defines its own.
 */
export interface LockKind {
  /**
   * `lock`: the mutex; `read` / `write`: a side of a read-write lock; `all`:
   * both sides (force-release only); `semaphore`: a semaphore's permits;
   * `election`: an election's term.
   */
  readonly role: 'lock' | 'read' | 'write' | 'all' | 'semaphore' | 'election';
  /** The script that renews holds of this kind (the watchdog's tick): holds with one script and lease renew in one call. */
  readonly renew: Script;
  readonly calls: KindCalls;
}

/** The Redis calls of a kind: the shared path runs them in the same places for every kind. */
export interface KindCalls {
  /**
   * One attempt of an acquisition: 'try', 'join' (queued), or 'reenter' (one
   * more hold of the same owner, or the confirmation of a hand-off).
   */
  acquire(ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string): Promise<AcquireReply>;
  /** Drops one hold of the owner (`all`: every hold, the last release); counts each send in `sends` (see releaseHold). */
  release(ctx: AcquireContext, hold: HoldState, all: boolean, sends: Sends): Promise<ReleaseReply>;
  /** Sets the remaining lease of the hold. */
  extend(ctx: AcquireContext, hold: HoldState, leaseMs: number): Promise<ExtendReply>;
  /**
   * Removes a request's queue entry (with `requestId`) and whatever `owner`
   * holds: one script call, which the caller runs under its call policy and
   * whose failure it reports.
   */
  cancel(ctx: AcquireContext, keys: LockKeys, owner: string, requestId: string | undefined): Promise<unknown>;
  /** Appends to `into` the KEYS the `renew` script takes for this hold. */
  renewKeys(hold: HoldState, into: string[]): void;
}

/** What a kind whose release script also cancels tells `scriptedKind` (the semaphore, the election). */
export interface KindScripts {
  readonly role: LockKind['role'];
  /** KEYS of the acquire and release scripts. */
  readonly keys: readonly string[];
  readonly acquire: Script;
  /** acquire's ARGV for one attempt (`mode` 'reenter' is the scripts' 'confirm'). */
  acquireArgs(ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string): (string | number)[];
  decodeAcquire(reply: unknown, req: AcquireRequest): AcquireReply;
  /** Sent with a request id, it is the cancel: owners are never reused, so it undoes exactly that request. */
  readonly release: Script;
  /** release's ARGV ('' for no request id). */
  releaseArgs(ctx: AcquireContext, owner: string, requestId: string): (string | number)[];
  readonly extend: Script;
  /** KEYS of the extend script; ARGV is the owner and the lease. */
  readonly extendKeys: readonly string[];
  readonly renew: Script;
  /** The one KEY the renew script takes per hold. */
  readonly renewKey: string;
}

/**
 * The kind of a synchronizer whose scripts take KEYS and ARGV of their own,
 * whose holds do not nest, and whose release script is also its cancel.
 */
export function scriptedKind(s: KindScripts): LockKind {
  const release = (ctx: AcquireContext, owner: string, requestId: string) => runScript(ctx.redis, s.release, s.keys, s.releaseArgs(ctx, owner, requestId));
  return {
    role: s.role,
    renew: s.renew,
    calls: {
      acquire: (ctx, req, requestId, mode) =>
        callGranting(ctx, s.acquire, s.keys, s.acquireArgs(ctx, req, requestId, mode === 'reenter' ? 'confirm' : mode), {
          name: req.name,
          decode: (reply) => s.decodeAcquire(reply, req),
          granted: (decoded) => decoded.granted,
          limits: req.deadline === undefined && req.signal === undefined ? undefined : { deadline: req.deadline, signal: req.signal },
        }),
      release: (ctx, hold, _all, sends) => callRedis(counted(sends, () => release(ctx, hold.owner, '')), ctx.policy, undefined, releaseReply),
      extend: (ctx, hold, leaseMs) =>
        callGranting(ctx, s.extend, s.extendKeys, [hold.owner, leaseMs], { name: hold.name, decode: extendReply, granted: (outcome) => outcome.ok }),
      cancel: (ctx, _keys, owner, requestId) => release(ctx, owner, requestId ?? ''),
      renewKeys: (_hold, into) => into.push(s.renewKey),
    },
  };
}

/** What an event is about, when it is not a mutex: a side of a read-write lock, a semaphore's permits, an election's term. */
export type EventKind = 'read' | 'write' | 'semaphore' | 'election';

/** The `kind` field events carry for a hold of this kind: none for the mutex, whose events are unchanged. */
export function eventKind(kind: LockKind): EventKind | undefined {
  return kind.role === 'all' || kind.role === 'lock' ? undefined : kind.role;
}

/** What a `KeyConflictError` about a hold of this kind names: a side (or both) of a read-write lock is the read-write lock. */
export function conflictKind(kind: LockKind): KeyConflictKind {
  const { role } = kind;
  return role === 'read' || role === 'write' || role === 'all' ? 'read-write-lock' : role;
}
