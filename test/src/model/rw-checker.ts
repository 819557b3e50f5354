import type { Tenure } from './checker.js';

/**
 * Checks of a read-write lock's history. Its holders record their events
 * under `rwLockName(name, side)`, so buildTenures() (checker.ts) rebuilds one
 * tenure per read hold and per write hold; these checks then look across the
 * two sides of each name.
 */

export type RwSide = 'read' | 'write';

/** The lock name a history event of one side of read-write lock `name` carries. */
export function rwLockName(name: string, side: RwSide): string {
  return `${name}#${side}`;
}

function parse(lock: string): { name: string; side: RwSide } | undefined {
  const match = /^(.*)#(read|write)$/.exec(lock);
  return match ? { name: match[1]!, side: match[2] as RwSide } : undefined;
}

export interface RwOverlap {
  name: string;
  writer: Tenure;
  other: Tenure;
}

export interface RwTokenViolation {
  name: string;
  rule: 'write-not-above-earlier' | 'read-below-earlier-write' | 'later-write-not-above-read';
  earlier: Tenure;
  later: Tenure;
}

function byName(tenures: readonly Tenure[]): Map<string, { tenure: Tenure; side: RwSide }[]> {
  const groups = new Map<string, { tenure: Tenure; side: RwSide }[]>();
  for (const tenure of tenures) {
    const parsed = parse(tenure.lock);
    if (!parsed) continue;
    const list = groups.get(parsed.name) ?? [];
    list.push({ tenure, side: parsed.side });
    groups.set(parsed.name, list);
  }
  return groups;
}

/**
 * No writer overlaps any reader or writer: a write tenure whose interval
 * intersects another holder's tenure (either side) of the same name. A
 * holder's own read inside its write (a downgrade) is not a rival.
 */
export function findWriterOverlaps(tenures: readonly Tenure[]): RwOverlap[] {
  const overlaps: RwOverlap[] = [];
  for (const [name, list] of byName(tenures)) {
    const sorted = [...list].sort((a, b) => (a.tenure.start < b.tenure.start ? -1 : a.tenure.start > b.tenure.start ? 1 : 0));
    sorted.forEach(({ tenure: writer, side }, i) => {
      if (side !== 'write') return;
      for (let j = 0; j < sorted.length; j++) {
        const other = sorted[j]!.tenure;
        // A pair of writers is reported once, from the earlier one.
        if (j === i || other.holder === writer.holder || (j < i && sorted[j]!.side === 'write')) continue;
        if (other.start >= writer.end) break;
        if (other.end > writer.start) overlaps.push({ name, writer, other });
      }
    });
  }
  return overlaps;
}

/**
 * Fencing: a writer's token is above the token of every hold (either side)
 * granted before the writer asked; a reader's token is at least that of every
 * write granted before it asked, and below that of every write asked for
 * after it was granted.
 */
export function findRwTokenViolations(tenures: readonly Tenure[]): RwTokenViolation[] {
  const violations: RwTokenViolation[] = [];
  for (const [name, list] of byName(tenures)) {
    const writes = list.filter((x) => x.side === 'write').map((x) => x.tenure);
    for (const { tenure: later, side } of list) {
      for (const { tenure: earlier, side: earlierSide } of list) {
        if (earlier === later || !(earlier.start < later.invokedAt)) continue;
        if (side === 'write' && !(later.token > earlier.token)) {
          violations.push({ name, rule: 'write-not-above-earlier', earlier, later });
        }
        if (side === 'read' && earlierSide === 'write' && !(later.token >= earlier.token)) {
          violations.push({ name, rule: 'read-below-earlier-write', earlier, later });
        }
      }
      if (side !== 'read') continue;
      for (const write of writes) {
        if (write.invokedAt > later.start && !(write.token > later.token)) {
          violations.push({ name, rule: 'later-write-not-above-read', earlier: later, later: write });
        }
      }
    }
  }
  return violations;
}
