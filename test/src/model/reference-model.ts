/**
 * Reference model of who may hold what, for the model-based tests: per lock
 * name the owners (one per new acquisition, identified by client + token),
 * their hold counts, the chains waiting for it, the highest token handed out,
 * and an occupancy map every critical section enters and leaves.
 *
 * The model is a checker, not a predictor: real Redis and three connections
 * decide who gets a lock first, so the model is told what happened (calls
 * invoked, settled, events emitted) and records a violation whenever that
 * history breaks a rule of the API. Every rule is checked against the state at
 * the call's invocation and at its settlement, so a loss racing with the call
 * (a short lease expiring, a concurrent close()) is never flagged.
 */

/** Where an owner's hold stands. */
export type OwnerState = 'held' | 'released' | 'lost' | 'closed';

/** One owner: a new acquisition of a lock through one client, and its re-entries. */
export interface OwnerRecord {
  readonly id: number;
  readonly client: number;
  readonly name: string;
  readonly token: number;
  /** Holds in Redis, as the `acquired` / `released` events counted them. */
  count: number;
  state: OwnerState;
  /** Releases of this owner in flight (lease.release(), or withLock's own after its callback). */
  releasing: number;
  /** Why it was lost (`lost` event reason). */
  lostReason?: string;
}

/** What a caller sees when a lock call settles. */
export type Outcome =
  | { kind: 'lease' }
  | { kind: 'null' }
  | { kind: 'value' }
  | { kind: 'error'; code: string; name: string; error: unknown };

/** Outcome kinds the model allows: error codes, or 'lease' / 'null' / 'value'. */
export type Allowed = ReadonlySet<string>;

export class ReferenceModel {
  readonly violations: string[] = [];
  readonly trace: string[] = [];
  readonly owners: OwnerRecord[] = [];
  /** How often each kind of step met each outcome, for coverage summaries. */
  readonly tally = new Map<string, number>();
  /** Highest token of a new acquisition whose call settled, per name. */
  readonly #maxSettledToken = new Map<string, number>();
  /** Owners inside a critical section of each name, with their nesting depth. */
  readonly #occupancy = new Map<string, Map<OwnerRecord, number>>();
  /** Chains waiting per name, in the order they asked (for the trace and `tryAcquire` nulls). */
  readonly #waiting = new Map<string, string[]>();
  /** Calls in flight per name (acquisitions, releases) that may hold it unseen. */
  readonly #inFlight = new Map<string, number>();
  /** Names where a background cleanup (cancel after a timeout or abort, a zombie lease) may still hold the key. */
  readonly #uncertain = new Set<string>();
  /** New acquisitions per name so far: one during a call means the lock was held meanwhile. */
  readonly #grants = new Map<string, number>();
  readonly #closed = new Set<number>();
  readonly #closing = new Set<number>();
  #nextOwnerId = 1;

  count(tag: string): void {
    this.tally.set(tag, (this.tally.get(tag) ?? 0) + 1);
  }

  note(line: string): void {
    this.trace.push(line);
  }

  violation(line: string): void {
    this.violations.push(line);
    this.trace.push(`VIOLATION ${line}`);
  }

  // ---- clients ----

  isClosed(client: number): boolean {
    return this.#closed.has(client);
  }

  /** True from the moment close() is invoked: operations racing with it may see either side. */
  isClosing(client: number): boolean {
    return this.#closing.has(client) || this.#closed.has(client);
  }

  closeInvoked(client: number): void {
    this.#closing.add(client);
  }

  /**
   * close() resolved. With or without `{ release: true }`, every lease the
   * client still held must have been told first (a `lost` event, reason
   * 'closed'); the keys then stay until their TTL or are being released,
   * so the model cannot say when they are free.
   */
  closeSettled(client: number): void {
    this.#closed.add(client);
    for (const owner of this.owners) {
      if (owner.client !== client || owner.state !== 'held') continue;
      // A release already sent when close() ran takes the hold out of the
      // client's books first: its 'released' event ends it instead.
      if (owner.releasing > 0) continue;
      // New semantics: every lease still held ends with a `lost` event, reason 'closed'.
      this.violation(`close() of client ${client} left owner ${describe(owner)} held (no 'lost' event with reason 'closed')`);
      owner.state = 'closed';
      this.#leaveAll(owner);
    }
    for (const owner of this.owners) if (owner.client === client && owner.state === 'closed') this.#uncertain.add(owner.name);
  }

  // ---- acquisitions ----

  /** New acquisitions of `name` so far (compare two readings to see whether anyone took it in between). */
  grants(name: string): number {
    return this.#grants.get(name) ?? 0;
  }

  /** Snapshot taken when an acquisition is invoked. */
  invokeAcquire(name: string, chain: string): { maxSettledToken: number } {
    this.#inFlight.set(name, (this.#inFlight.get(name) ?? 0) + 1);
    const queue = this.#waiting.get(name) ?? [];
    queue.push(chain);
    this.#waiting.set(name, queue);
    return { maxSettledToken: this.#maxSettledToken.get(name) ?? 0 };
  }

  /** The acquisition call settled (before the caller is resumed). */
  acquireSettled(name: string, chain: string): void {
    this.#inFlight.set(name, (this.#inFlight.get(name) ?? 1) - 1);
    const queue = this.#waiting.get(name) ?? [];
    const at = queue.indexOf(chain);
    if (at >= 0) queue.splice(at, 1);
  }

  /** A background cancel (timeout, abort, close) may leave the key briefly held. */
  markUncertain(name: string): void {
    this.#uncertain.add(name);
  }

  /** `acquired` event. */
  onAcquired(client: number, name: string, token: number, holdCount: number, reentrant: boolean): void {
    const owner = this.ownerOf(client, name, token);
    if (!reentrant) {
      if (owner) {
        this.violation(`token ${token} of ${name} granted twice (already owner ${describe(owner)})`);
        return;
      }
      const other = this.owners.find((o) => o.name === name && o.token === token);
      if (other) this.violation(`token ${token} of ${name} granted to client ${client} and to ${describe(other)}`);
      if (holdCount !== 1) this.violation(`new acquisition of ${name} (token ${token}) reported holdCount ${holdCount}`);
      this.#grants.set(name, (this.#grants.get(name) ?? 0) + 1);
      const record: OwnerRecord = { id: this.#nextOwnerId++, client, name, token, count: 1, state: 'held', releasing: 0 };
      this.owners.push(record);
      this.note(`acquired ${describe(record)}`);
      return;
    }
    if (!owner) {
      this.violation(`re-entry of ${name} with unknown token ${token} on client ${client}`);
      return;
    }
    if (owner.state !== 'held') this.violation(`re-entry of ${describe(owner)} after it was ${owner.state}`);
    if (holdCount !== owner.count + 1) {
      this.violation(`re-entry of ${describe(owner)}: holdCount ${holdCount}, model expects ${owner.count + 1}`);
    }
    owner.count = holdCount;
    this.note(`re-entered ${describe(owner)}`);
  }

  /** `released` event. */
  onReleased(client: number, name: string, token: number, holdCount: number): void {
    const owner = this.ownerOf(client, name, token);
    if (!owner) {
      this.violation(`release of unknown owner ${name}#${token} on client ${client}`);
      return;
    }
    // A release in flight when close() ran may land after the owner was closed.
    const raced = owner.state === 'closed' && this.isClosing(client);
    if (owner.state !== 'held' && !raced) this.violation(`'released' of ${describe(owner)} after it was ${owner.state}`);
    if (holdCount !== owner.count - 1) {
      this.violation(`release of ${describe(owner)}: holdCount ${holdCount}, model expects ${owner.count - 1}`);
    }
    owner.count = holdCount;
    if (holdCount === 0 && !raced) owner.state = 'released';
    this.note(`released ${describe(owner)}`);
  }

  /** `lost` event. */
  onLost(client: number, name: string, token: number, reason: string): void {
    const owner = this.ownerOf(client, name, token);
    if (!owner) {
      this.violation(`'lost' (${reason}) for unknown owner ${name}#${token} on client ${client}`);
      return;
    }
    if (owner.state !== 'held') this.violation(`'lost' (${reason}) of ${describe(owner)} after it was ${owner.state}`);
    // Nothing in these programs touches keys behind holdfast's back, and a
    // started hand-off keeps its whole lease: only expiry and close() end a lease.
    const allowed = reason === 'expired' || (reason === 'closed' && this.isClosing(client));
    if (!allowed) this.violation(`${describe(owner)} lost with reason '${reason}'`);
    owner.state = reason === 'closed' ? 'closed' : 'lost';
    owner.lostReason = reason;
    if (reason === 'expired') this.#uncertain.add(name);
    this.#leaveAll(owner);
    this.note(`lost ${describe(owner)} (${reason})`);
  }

  /** Tokens: a new owner's token exceeds every token whose acquisition settled before this call was invoked. */
  checkNewToken(owner: OwnerRecord, snapshot: { maxSettledToken: number }): void {
    if (owner.token <= snapshot.maxSettledToken) {
      this.violation(`token ${owner.token} of ${describe(owner)} not above ${snapshot.maxSettledToken}, settled before it was asked for`);
    }
    this.#maxSettledToken.set(owner.name, Math.max(this.#maxSettledToken.get(owner.name) ?? 0, owner.token));
  }

  ownerOf(client: number, name: string, token: number): OwnerRecord | undefined {
    return this.owners.find((o) => o.client === client && o.name === name && o.token === token);
  }

  // ---- occupancy ----

  /**
   * A critical section of `owner` starts. Any other owner inside a section of
   * the same name must have been told it lost the lock by now (`isHeld`
   * false): two owners believing they hold one lock is the bug this catches.
   */
  enter(owner: OwnerRecord, stillHeld: (other: OwnerRecord) => boolean): void {
    const inside = this.#occupancy.get(owner.name) ?? new Map<OwnerRecord, number>();
    this.#occupancy.set(owner.name, inside);
    this.count(inside.has(owner) ? 'section re-entered by its owner' : 'section entered');
    for (const [other] of inside) {
      if (other === owner) continue;
      this.count('section entered while a lost owner was still inside');
      if (stillHeld(other)) {
        this.violation(`two owners of ${owner.name} at once: ${describe(owner)} entered while ${describe(other)} still holds it`);
      }
    }
    inside.set(owner, (inside.get(owner) ?? 0) + 1);
  }

  leave(owner: OwnerRecord): void {
    const inside = this.#occupancy.get(owner.name);
    const depth = inside?.get(owner);
    if (!inside || depth === undefined) return;
    if (depth <= 1) inside.delete(owner);
    else inside.set(owner, depth - 1);
  }

  #leaveAll(owner: OwnerRecord): void {
    this.#occupancy.get(owner.name)?.delete(owner);
  }

  // ---- releases ----

  invokeRelease(name: string): void {
    this.#inFlight.set(name, (this.#inFlight.get(name) ?? 0) + 1);
  }

  releaseSettled(name: string): void {
    this.#inFlight.set(name, (this.#inFlight.get(name) ?? 1) - 1);
  }

  /**
   * May `tryAcquire()` of `name` by a new owner return null? Only when
   * something could hold the key: an owner, a call in flight (a grant not
   * yet seen, a release not yet applied), a waiter's hand-off claim, or a
   * background cleanup.
   */
  mayBeBusy(name: string, self: string): boolean {
    if (this.owners.some((o) => o.name === name && o.state === 'held')) return true;
    if ((this.#inFlight.get(name) ?? 0) > 1) return true;
    if ((this.#waiting.get(name) ?? []).some((chain) => chain !== self)) return true;
    return this.#uncertain.has(name);
  }

  /** Names the model says nobody holds and nothing may still hold. */
  certainlyFree(name: string): boolean {
    return !this.mayBeBusy(name, '') && (this.#inFlight.get(name) ?? 0) === 0;
  }

  // ---- outcomes ----

  /** Records a violation unless `outcome` is one of `allowed`; counts it under `tag` when given. */
  expectOutcome(what: string, outcome: Outcome, allowed: Allowed, tag?: string): void {
    const key = outcome.kind === 'error' ? outcome.code : outcome.kind;
    if (tag !== undefined) this.count(`${tag} -> ${key}`);
    if (allowed.has(key)) return;
    const seen = outcome.kind === 'error' ? `${outcome.name} (${outcome.code}): ${String((outcome.error as Error)?.message)}` : outcome.kind;
    this.violation(`${what}: got ${seen}, model allows ${[...allowed].join(' | ')}`);
  }
}

/** Merges `from` into `into` (coverage across runs). */
export function addTally(into: Map<string, number>, from: ReadonlyMap<string, number>): void {
  for (const [k, n] of from) into.set(k, (into.get(k) ?? 0) + n);
}

export function describe(owner: OwnerRecord): string {
  return `c${owner.client}:${owner.name}#${owner.token}`;
}

/** The error code of a settled call, `'foreign'` for anything that is not a holdfast error. */
export function outcomeOf(settled: { ok: true; value: unknown } | { ok: false; error: unknown }): Outcome {
  if (settled.ok) {
    if (settled.value === null) return { kind: 'null' };
    if (typeof settled.value === 'object' && settled.value !== null && 'token' in settled.value) return { kind: 'lease' };
    return { kind: 'value' };
  }
  const error = settled.error as { code?: unknown; name?: unknown };
  const code = typeof error?.code === 'string' ? error.code : 'foreign';
  return { kind: 'error', code, name: typeof error?.name === 'string' ? error.name : typeof error, error: settled.error };
}
