import type { HistoryEvent } from './history.js';

/**
 * One acquisition of a lock by one holder, from its `acquire-ok` (hold count
 * 1) to the release of its last hold or its `lost`. `end` is the last action
 * the holder took while it still believed it held the lock: a re-entry, a
 * guarded write, a counter step or the release invoke. A holder told `lost`
 * stops believing at that moment, so what it does afterwards is counted
 * apart (`actsAfterLost`) and never extends its interval. A holder frozen
 * (SIGSTOP) while it believed it held the lock does nothing meanwhile: only
 * an action after its successor's acquisition makes an overlap.
 */
export interface Tenure {
  holder: string;
  lock: string;
  token: number;
  invokedAt: bigint;
  start: bigint;
  end: bigint;
  lostAt: bigint | undefined;
  releasedAt: bigint | undefined;
}

export interface Overlap {
  lock: string;
  earlier: Tenure;
  later: Tenure;
}

export interface Inversion {
  lock: string;
  kind: 'order' | 'duplicate' | 'reentry';
  earlier: { holder: string; token: number };
  later: { holder: string; token: number };
}

export interface StaleWrite {
  resource: string;
  holder: string;
  token: number;
  /** The token the resource had accepted before this write was invoked. */
  seenToken: number;
}

export interface CheckResult {
  tenures: Tenure[];
  overlaps: Overlap[];
  inversions: Inversion[];
  staleWrites: StaleWrite[];
  /** Writes, counter steps or re-entries a holder invoked after it was told `lost`. */
  actsAfterLost: HistoryEvent[];
  /** Writes a holder invoked after it had been told `lost`, and that the resource accepted. */
  acceptedAfterLost: number;
  writesAccepted: number;
  writesRejected: number;
}

const ACTS = new Set(['write-invoke', 'counter-read', 'counter-write']);

/** Rebuilds every holder's tenures; events must be in time order. */
export function buildTenures(history: readonly HistoryEvent[]): {
  tenures: Tenure[];
  reentryMismatches: Inversion[];
  actsAfterLost: HistoryEvent[];
} {
  const open = new Map<string, Tenure>();
  const lostFor = new Map<string, Tenure>();
  const invoked = new Map<string, bigint>();
  const tenures: Tenure[] = [];
  const reentryMismatches: Inversion[] = [];
  const actsAfterLost: HistoryEvent[] = [];
  for (const e of history) {
    const key = `${e.holder}\u0000${e.lock}`;
    const tenure = open.get(key);
    switch (e.type) {
      case 'acquire-invoke':
        if (!tenure) invoked.set(key, e.t);
        break;
      case 'acquire-ok':
        if (tenure) {
          if (e.token !== tenure.token) {
            reentryMismatches.push({
              lock: e.lock,
              kind: 'reentry',
              earlier: { holder: e.holder, token: tenure.token },
              later: { holder: e.holder, token: e.token ?? NaN },
            });
          }
          tenure.end = e.t;
        } else {
          const created: Tenure = {
            holder: e.holder,
            lock: e.lock,
            token: e.token ?? NaN,
            invokedAt: invoked.get(key) ?? e.t,
            start: e.t,
            end: e.t,
            lostAt: undefined,
            releasedAt: undefined,
          };
          tenures.push(created);
          open.set(key, created);
          lostFor.delete(key);
        }
        break;
      case 'lost':
        if (tenure) {
          tenure.lostAt = e.t;
          open.delete(key);
          lostFor.set(key, tenure);
        }
        break;
      case 'release-invoke':
        if (tenure) {
          tenure.end = e.t;
          if ((e.holdCount ?? 1) <= 1) {
            tenure.releasedAt = e.t;
            open.delete(key);
          }
        }
        break;
      default:
        if (ACTS.has(e.type)) {
          if (tenure) tenure.end = e.t;
          else if (lostFor.has(key)) actsAfterLost.push(e);
        }
    }
  }
  return { tenures, reentryMismatches, actsAfterLost };
}

/** (1) Tenures of different holders on one lock whose intervals intersect. */
export function findOverlaps(tenures: readonly Tenure[]): Overlap[] {
  const byLock = groupBy(tenures, (s) => s.lock);
  const overlaps: Overlap[] = [];
  for (const [lock, list] of byLock) {
    const sorted = [...list].sort((a, b) => cmp(a.start, b.start));
    // The tenure reaching furthest, and the furthest of any other holder: a
    // holder's own earlier tenure never counts against it.
    let first: Tenure | undefined;
    let second: Tenure | undefined;
    for (const s of sorted) {
      const rival = first && first.holder !== s.holder ? first : second;
      if (rival && s.start < rival.end) overlaps.push({ lock, earlier: rival, later: s });
      if (!first || s.end > first.end) {
        if (first && first.holder !== s.holder) second = first;
        first = s;
      } else if (s.holder !== first.holder && (!second || s.end > second.end)) {
        second = s;
      }
    }
  }
  return overlaps;
}

/**
 * (2) For two new acquisitions of one lock where the first completed before the
 * second was invoked, the second's token must be larger; no token twice.
 */
export function findInversions(tenures: readonly Tenure[]): Inversion[] {
  const inversions: Inversion[] = [];
  for (const [lock, list] of groupBy(tenures, (s) => s.lock)) {
    const seen = new Map<number, Tenure>();
    for (const s of list) {
      const twin = seen.get(s.token);
      if (twin) {
        inversions.push({ lock, kind: 'duplicate', earlier: twin, later: s });
      } else seen.set(s.token, s);
    }
    const byStart = [...list].sort((a, b) => cmp(a.start, b.start));
    const byInvoke = [...list].sort((a, b) => cmp(a.invokedAt, b.invokedAt));
    let i = 0;
    let max: Tenure | undefined;
    for (const s of byInvoke) {
      for (; i < byStart.length && byStart[i]!.start < s.invokedAt; i++) {
        if (!max || byStart[i]!.token > max.token) max = byStart[i];
      }
      if (max && max !== s && s.token <= max.token && max.token !== s.token) {
        inversions.push({ lock, kind: 'order', earlier: max, later: s });
      }
    }
  }
  return inversions;
}

/**
 * (3) A write accepted by a fenced resource although the resource had already
 * accepted (before this write was invoked) a write with an equal or larger token.
 */
export function findStaleWrites(history: readonly HistoryEvent[]): {
  stale: StaleWrite[];
  accepted: number;
  rejected: number;
} {
  const pending = new Map<string, HistoryEvent>();
  const completed: { invoke: HistoryEvent; ok: HistoryEvent }[] = [];
  for (const e of history) {
    const key = `${e.holder}\u0000${e.resource ?? e.lock}`;
    if (e.type === 'write-invoke') pending.set(key, e);
    if (e.type === 'write-ok') {
      const invoke = pending.get(key);
      if (invoke) completed.push({ invoke, ok: e });
      pending.delete(key);
    }
  }
  const stale: StaleWrite[] = [];
  let accepted = 0;
  let rejected = 0;
  for (const [resource, writes] of groupBy(completed, (w) => w.invoke.resource ?? w.invoke.lock)) {
    const byOk = writes.filter((w) => w.ok.accepted).sort((a, b) => cmp(a.ok.t, b.ok.t));
    const byInvoke = [...writes].sort((a, b) => cmp(a.invoke.t, b.invoke.t));
    let i = 0;
    let seen = -Infinity;
    for (const w of byInvoke) {
      for (; i < byOk.length && byOk[i]!.ok.t < w.invoke.t; i++) seen = Math.max(seen, byOk[i]!.invoke.token ?? -Infinity);
      if (!w.ok.accepted) {
        rejected++;
        continue;
      }
      accepted++;
      const token = w.invoke.token ?? NaN;
      if (!(token > seen)) stale.push({ resource, holder: w.invoke.holder, token, seenToken: seen });
    }
  }
  return { stale, accepted, rejected };
}

/** Runs every history check. */
export function checkHistory(history: readonly HistoryEvent[]): CheckResult {
  const { tenures, reentryMismatches, actsAfterLost } = buildTenures(history);
  const writes = findStaleWrites(history);
  const lostWrites = new Set(actsAfterLost.filter((e) => e.type === 'write-invoke'));
  let acceptedAfterLost = 0;
  const pending = new Map<string, HistoryEvent>();
  for (const e of history) {
    const key = `${e.holder}\u0000${e.resource ?? e.lock}`;
    if (e.type === 'write-invoke') pending.set(key, e);
    if (e.type === 'write-ok' && e.accepted && lostWrites.has(pending.get(key)!)) acceptedAfterLost++;
  }
  return {
    tenures,
    overlaps: findOverlaps(tenures),
    inversions: [...reentryMismatches, ...findInversions(tenures)],
    staleWrites: writes.stale,
    actsAfterLost,
    acceptedAfterLost,
    writesAccepted: writes.accepted,
    writesRejected: writes.rejected,
  };
}

export interface CounterCheck {
  increments: number;
  final: number;
  lostUpdates: number;
}

/**
 * (4) An unguarded read-sleep-write counter: every `counter-write` is one
 * increment, so the final value must equal their number.
 */
export function checkCounter(history: readonly HistoryEvent[], final: number): CounterCheck {
  const increments = history.filter((e) => e.type === 'counter-write').length;
  return { increments, final, lostUpdates: increments - final };
}

/** A one-line description of a check result, for assertion messages. */
export function summarize(result: CheckResult): string {
  const first = result.overlaps[0];
  const inv = result.inversions[0];
  return [
    `${result.tenures.length} tenures, ${result.overlaps.length} overlaps, ${result.inversions.length} inversions,`,
    `${result.staleWrites.length} stale writes accepted, ${result.actsAfterLost.length} acts after lost`,
    first ? `; first overlap on ${first.lock}: ${first.earlier.holder}#${first.earlier.token} / ${first.later.holder}#${first.later.token}` : '',
    inv ? `; first inversion (${inv.kind}) on ${inv.lock}: ${inv.earlier.token} then ${inv.later.token}` : '',
  ].join(' ');
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
