import type { ContentionResult } from './scenario-contention.js';
import { fmt } from './stats.js';

/**
 * results/handoff.svg, drawn from the contention results of the JSON: hand-off to another worker p50 (log
 * scale) and utilisation per library, one bar per mode, with holdfast's goals as dashed lines.
 */

const WIDTH = 920;
const LABEL_W = 290;
const PLOT_W = 520;
const ROW_H = 34;
const BAR_H = 12;
const COLORS = { 'no-pause': '#9db8d9', pause: '#2c5d99' } as const;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Panel {
  title: string;
  value: (r: ContentionResult) => number;
  scale: (v: number) => number;
  ticks: number[];
  goal: { at: number; label: string };
  unit: string;
}

function logScale(lo: number, hi: number): (v: number) => number {
  const a = Math.log10(lo);
  const b = Math.log10(hi);
  return (v) => (Math.max(0, Math.min(1, (Math.log10(Math.max(v, lo)) - a) / (b - a)))) * PLOT_W;
}

function panel(p: Panel, libraries: { id: string; label: string }[], results: readonly ContentionResult[], top: number): { svg: string; height: number } {
  const parts: string[] = [];
  const plotTop = top + 44;
  const plotH = libraries.length * ROW_H;
  parts.push(`<text x="${LABEL_W}" y="${top + 18}" font-size="15" font-weight="bold">${esc(p.title)}</text>`);
  for (const t of p.ticks) {
    const x = (LABEL_W + p.scale(t)).toFixed(1);
    parts.push(
      `<line x1="${x}" y1="${plotTop}" x2="${x}" y2="${plotTop + plotH}" stroke="#e3e3e3"/>`,
      `<text x="${x}" y="${plotTop + plotH + 16}" font-size="11" text-anchor="middle" fill="#555">${fmt(t, 2)}${p.unit}</text>`,
    );
  }
  const gx = (LABEL_W + p.scale(p.goal.at)).toFixed(1);
  parts.push(
    `<line x1="${gx}" y1="${plotTop - 6}" x2="${gx}" y2="${plotTop + plotH}" stroke="#c0392b" stroke-dasharray="5,4"/>`,
    `<text x="${(Number(gx) + 4).toFixed(1)}" y="${plotTop - 8}" font-size="11" fill="#c0392b">${esc(p.goal.label)}</text>`,
  );
  libraries.forEach((lib, i) => {
    const y = plotTop + i * ROW_H + 4;
    parts.push(`<text x="${LABEL_W - 8}" y="${y + BAR_H + 4}" font-size="12" text-anchor="end">${esc(lib.label)}</text>`);
    (['no-pause', 'pause'] as const).forEach((mode, j) => {
      const r = results.find((x) => x.id === lib.id && x.mode === mode);
      const by = y + j * (BAR_H + 2);
      const v = r ? p.value(r) : Number.NaN;
      if (!Number.isFinite(v)) {
        parts.push(`<text x="${LABEL_W + 4}" y="${by + BAR_H - 2}" font-size="10" fill="#888">${r ? 'n/a (no hand-off to another worker)' : 'not run'}</text>`);
        return;
      }
      const w = Math.max(1, p.scale(v));
      parts.push(
        `<rect x="${LABEL_W}" y="${by}" width="${w.toFixed(1)}" height="${BAR_H}" fill="${COLORS[mode]}"/>`,
        `<text x="${(LABEL_W + w + 4).toFixed(1)}" y="${by + BAR_H - 2}" font-size="10" fill="#333">${fmt(v, 2)}${p.unit}${r?.capped ? ' (capped)' : ''}</text>`,
      );
    });
  });
  return { svg: parts.join('\n'), height: 44 + plotH + 30 };
}

export function renderHandoffSvg(results: readonly ContentionResult[], subtitle: string): string {
  const libraries: { id: string; label: string }[] = [];
  for (const r of results) if (!libraries.some((l) => l.id === r.id)) libraries.push({ id: r.id, label: r.label });
  const gaps = results.map((r) => r.handoffOther.p50).filter(Number.isFinite);
  const hi = Math.max(10, ...gaps.map((g) => g * 2));
  const lo = 0.05;
  const gapTicks = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].filter((t) => t >= lo && t <= hi);
  let y = 56;
  const first = panel(
    {
      title: 'Hand-off to another worker, p50 (ms, log scale; lower is better)',
      value: (r) => r.handoffOther.p50,
      scale: logScale(lo, hi),
      ticks: gapTicks,
      goal: { at: 0.5, label: 'goal ≤ 0.5 ms' },
      unit: ' ms',
    },
    libraries,
    results,
    y,
  );
  y += first.height + 16;
  const second = panel(
    {
      title: 'Utilisation = sections/s × section length (higher is better)',
      value: (r) => r.utilisation,
      scale: (v) => Math.max(0, Math.min(1, v)) * PLOT_W,
      ticks: [0, 0.25, 0.5, 0.75, 1],
      goal: { at: 0.9, label: 'goal ≥ 0.90' },
      unit: '',
    },
    libraries,
    results,
    y,
  );
  const height = y + second.height + 40;
  const legendY = height - 22;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="16" y="26" font-size="18" font-weight="bold">Contention on one key: hand-off and utilisation</text>
<text x="16" y="44" font-size="12" fill="#555">${esc(subtitle)}</text>
${first.svg}
${second.svg}
<rect x="${LABEL_W}" y="${legendY - 10}" width="12" height="12" fill="${COLORS['no-pause']}"/>
<text x="${LABEL_W + 18}" y="${legendY}" font-size="12">no pause between sections</text>
<rect x="${LABEL_W + 220}" y="${legendY - 10}" width="12" height="12" fill="${COLORS.pause}"/>
<text x="${LABEL_W + 238}" y="${legendY}" font-size="12">forced hand-offs (pause after each release)</text>
</svg>
`;
}
