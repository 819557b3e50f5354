/** Order statistics and the run-to-run spread every latency figure is reported with. */

export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

/** Middle value; the mean of the two middle ones for an even count (two rounds give their mean). */
export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;
}

/** (max − min) / min of repeated measurements, in %: how far two runs of the same thing disagreed. */
export function spreadPct(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite);
  if (finite.length < 2) return Number.NaN;
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  return lo > 0 ? ((hi - lo) / lo) * 100 : Number.NaN;
}

/** Fixed, short renderings for tables. */
export function fmt(n: number | undefined | null, digits = 2): string {
  if (n === undefined || n === null || Number.isNaN(n)) return '–';
  if (!Number.isFinite(n)) return '∞';
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(Math.min(1, digits));
  return n.toFixed(digits);
}

export function pct(n: number | undefined): string {
  return n === undefined || Number.isNaN(n) ? '–' : `${fmt(n, 1)} %`;
}

/**
 * Holds for `ms`: a timer for all but the last millisecond, then a spin that yields to the event loop on
 * every turn.
 */
export async function holdFor(ms: number): Promise<void> {
  const end = performance.now() + ms;
  if (ms > 1.5) await new Promise<void>((resolve) => setTimeout(resolve, Math.floor(ms - 1)));
  while (performance.now() < end) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Shared wall clock in ms (µs resolution), comparable across processes of one machine. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A markdown table, one array of lines; `|` in a cell is escaped. */
export function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const esc = (cell: string) => cell.replace(/\|/g, '\\|');
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)];
}
