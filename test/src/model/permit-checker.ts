import type { HistoryEvent } from './history.js';

/**
 * The semaphore's safety check on a recorded history: at no instant do the
 * holders that believe they hold permits believe in more than the count.
 * A holder believes from its `acquire-ok` (with `value` = the permits it
 * got) to its `release-invoke` or its `lost`, whichever comes first. At
 * equal timestamps ends count before starts: a release is invoked before the
 * permits it frees can be granted. Tokens must never repeat.
 */
export interface PermitCheck {
  /** The most permits believed held at once. */
  peak: number;
  /** Instants at which more than `permits` were believed held. */
  excess: { t: bigint; inUse: number; holders: string[] }[];
  /** Tokens handed to more than one acquisition. */
  duplicateTokens: number[];
  /** Acquisitions seen. */
  sections: number;
}

export function checkPermits(history: readonly HistoryEvent[], permits: number): PermitCheck {
  type Edge = { t: bigint; delta: number; holder: string; end: boolean };
  const edges: Edge[] = [];
  const open = new Map<string, number>();
  const tokens = new Map<number, number>();
  let sections = 0;
  for (const event of history) {
    if (event.type === 'acquire-ok') {
      const held = event.value ?? 1;
      open.set(event.holder, held);
      edges.push({ t: event.t, delta: held, holder: event.holder, end: false });
      sections++;
      if (event.token !== undefined) tokens.set(event.token, (tokens.get(event.token) ?? 0) + 1);
    } else if ((event.type === 'release-invoke' || event.type === 'lost') && open.has(event.holder)) {
      edges.push({ t: event.t, delta: -open.get(event.holder)!, holder: event.holder, end: true });
      open.delete(event.holder);
    }
  }
  edges.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : Number(b.end) - Number(a.end)));
  let inUse = 0;
  let peak = 0;
  const holding = new Set<string>();
  const excess: PermitCheck['excess'] = [];
  for (const edge of edges) {
    inUse += edge.delta;
    if (edge.end) holding.delete(edge.holder);
    else holding.add(edge.holder);
    peak = Math.max(peak, inUse);
    if (inUse > permits) excess.push({ t: edge.t, inUse, holders: [...holding] });
  }
  const duplicateTokens = [...tokens].filter(([, n]) => n > 1).map(([token]) => token);
  return { peak, excess, duplicateTokens, sections };
}
