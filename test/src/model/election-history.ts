/** One line of an election worker's history (election-worker.mjs). */
export interface ElectionEvent {
  readonly t: bigint;
  readonly proc: string;
  readonly type: 'campaign' | 'gave-up' | 'elected' | 'lead' | 'lost' | 'resigned' | 'resign-failed' | 'exit';
  readonly epoch?: number;
  readonly value?: string;
  readonly code?: string;
}

/** A term as the history shows it: from election to the last moment its process believed it led. */
export interface TermSpan {
  readonly proc: string;
  readonly epoch: number;
  readonly electedAt: bigint;
  readonly believedUntil: bigint;
}

/** What the checker found wrong (every list empty in a correct history). */
export interface ElectionCheck {
  /** Pairs of terms of different processes whose belief spans overlap. */
  readonly overlaps: [TermSpan, TermSpan][];
  /** Terms whose epoch is not greater than the epoch of the term elected before them. */
  readonly epochInversions: TermSpan[];
  /** Processes with campaigns that neither elected nor gave up (beyond `unfinished` allowed for killed ones). */
  readonly unfinished: string[];
  /** `lead` lines after the same term's `lost` line. */
  readonly leadAfterLost: ElectionEvent[];
  readonly terms: TermSpan[];
}

export function parseLine(line: string): ElectionEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  const raw = JSON.parse(line) as Omit<ElectionEvent, 't'> & { t: string };
  return { ...raw, t: BigInt(raw.t) };
}

/**
 * Checks a history of election workers: no two processes led at once while
 * both believed it (a term's span runs from `elected` to its last `lead`
 * line, each written right after `isLeader` read true), epochs strictly
 * increase in election order, every campaign ended (elected or gave up;
 * `killed` processes may leave their last one open), and no term was believed
 * after its loss was reported.
 */
export function checkElection(events: readonly ElectionEvent[], killed: ReadonlySet<string> = new Set()): ElectionCheck {
  const spans = new Map<string, { proc: string; epoch: number; electedAt: bigint; believedUntil: bigint }>();
  const lostAt = new Map<string, bigint>();
  const leadAfterLost: ElectionEvent[] = [];
  const open = new Map<string, number>();
  for (const e of events) {
    const id = `${e.proc}:${e.epoch}`;
    if (e.type === 'campaign') open.set(e.proc, (open.get(e.proc) ?? 0) + 1);
    if (e.type === 'gave-up' || e.type === 'elected') open.set(e.proc, (open.get(e.proc) ?? 0) - 1);
    if (e.type === 'elected') spans.set(id, { proc: e.proc, epoch: e.epoch!, electedAt: e.t, believedUntil: e.t });
    if (e.type === 'lead') {
      const span = spans.get(id);
      if (span && e.t > span.believedUntil) span.believedUntil = e.t;
      const lost = lostAt.get(id);
      if (lost !== undefined && e.t > lost) leadAfterLost.push(e);
    }
    if (e.type === 'lost') lostAt.set(id, e.t);
  }
  const terms = [...spans.values()].sort((a, b) => (a.electedAt < b.electedAt ? -1 : 1));
  const overlaps: [TermSpan, TermSpan][] = [];
  for (let i = 0; i < terms.length; i++) {
    for (let j = i + 1; j < terms.length && terms[j]!.electedAt <= terms[i]!.believedUntil; j++) {
      if (terms[j]!.proc !== terms[i]!.proc || terms[j]!.epoch !== terms[i]!.epoch) overlaps.push([terms[i]!, terms[j]!]);
    }
  }
  const epochInversions = terms.filter((term, i) => i > 0 && term.epoch <= terms[i - 1]!.epoch);
  const unfinished = [...open].filter(([proc, count]) => count > (killed.has(proc) ? 1 : 0)).map(([proc]) => proc);
  return { overlaps, epochInversions, unfinished, leadAfterLost, terms };
}
