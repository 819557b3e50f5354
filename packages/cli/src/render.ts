import { printable, printableJson } from './printable.js';
import type { LockState } from './snapshot.js';

/** One table row per holder (a lock with waiters but no live holder gets one row too). */
function rows(states: readonly LockState[]): string[][] {
  const out: string[][] = [];
  for (const state of states) {
    const waiters = String(state.waiters.length);
    if (state.foreign) {
      out.push([state.name, state.kind, '(not written by holdfast)', '', '', '', '', waiters]);
      continue;
    }
    if (state.kind === 'latch') {
      // No holder: the count is what there is to see, and how long the latch stays unchanged.
      out.push([state.name, state.kind, `count ${state.count ?? 0}`, '', '', '', state.expiresInMs === undefined ? '' : formatMs(state.expiresInMs), waiters]);
      continue;
    }
    if (state.result !== undefined && state.result !== 'running') {
      // No holder: what is stored, under which token, and how long it stays.
      const stored = state.result === 'done' ? 'done (result stored)' : 'failed (error stored)';
      out.push([state.name, state.kind, stored, '', '', String(state.token ?? ''), state.expiresInMs === undefined ? '' : formatMs(state.expiresInMs), waiters]);
      continue;
    }
    if (state.kind === 'barrier') {
      out.push([state.name, state.kind, `${state.waiters.length} of ${state.parties ?? '?'} arrived, generation ${state.generation ?? 0}`, '', '', '', '', waiters]);
      continue;
    }
    const permits = (used: number | undefined) => (state.kind === 'semaphore' ? `${used ?? 0}/${state.permits ?? '?'}` : '');
    if (state.holders.length === 0) out.push([state.name, state.kind, '-', '', permits(undefined), '', '', waiters]);
    for (const h of state.holders) {
      out.push([
        state.name,
        h.side ? `${state.kind}:${h.side}` : state.kind,
        holderCell(h),
        String(h.holds),
        permits(h.permits),
        String(h.token),
        formatMs(h.remainingMs),
        waiters,
      ]);
    }
  }
  return out;
}

/** The HOLDER cell: the client, an unconfirmed hand-off, and an election leader's value. */
function holderCell(h: LockState['holders'][number]): string {
  if (h.handoffUnconfirmed) return `${h.client} (hand-off)`;
  return h.value === undefined ? h.client : `${h.client} = "${h.value}"`;
}

const HEADER = ['NAME', 'KIND', 'HOLDER', 'HOLDS', 'PERMITS', 'TOKEN', 'LEASE', 'WAITERS'];

/** A duration for people: `850ms`, `12.3s`, `4m05s`. */
export function formatMs(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1_000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** Columns padded to their widest cell, `width` cutting long lines (a terminal's columns); cells escaped (`printable`). */
export function table(header: readonly string[], body: readonly (readonly string[])[], width?: number): string {
  // Measured in code points: a name outside the BMP is one column, not two UTF-16 units.
  const cells = [header, ...body].map((row) => row.map((cell) => [...printable(cell)]));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]?.length ?? 0)));
  const line = (row: string[][]) => {
    const chars = row.flatMap((cell, i) => (i === row.length - 1 ? cell : [...cell, ...' '.repeat(widths[i]! - cell.length + 2)]));
    return width !== undefined && chars.length > width ? chars.slice(0, Math.max(0, width - 1)).join('') + '…' : chars.join('');
  };
  return cells.map(line).join('\n');
}

/** The `ls` table. */
export function lockTable(states: readonly LockState[], width?: number): string {
  return table(HEADER, rows(states), width);
}

/** The `inspect` text: every field of one lock, its holders, then its queue in order. */
export function describe(state: LockState): string {
  const lines = [`${state.kind} "${printable(state.name)}"`, `  key      ${printable(state.key)}`];
  if (state.foreign) return [...lines, '  state    the key holds data holdfast did not write'].join('\n');
  if (state.count !== undefined) {
    lines.push(`  count    ${state.count}`);
    if (state.expiresInMs !== undefined) lines.push(`  expires  in ${formatMs(state.expiresInMs)} unless counted down or set again`);
    return lines.join('\n');
  }
  if (state.result !== undefined) {
    lines.push(`  state    ${state.result}`, `  token    ${state.token ?? ''}`);
    if (state.fingerprint !== undefined) lines.push(`  fingerprint  ${printable(state.fingerprint)}`);
    const holder = state.holders[0];
    if (holder) lines.push(`  holder   ${printable(holder.client)}  lease ${formatMs(holder.remainingMs)}  owner ${printable(holder.owner)}`);
    if (state.expiresInMs !== undefined) lines.push(`  expires  in ${formatMs(state.expiresInMs)}`);
    return lines.join('\n');
  }
  if (state.parties !== undefined) {
    lines.push(`  parties  ${state.waiters.length} of ${state.parties} arrived`, `  generation  ${state.generation ?? 0}`);
    if (state.waiters.length > 0) {
      const body = state.waiters.map((w, i) => [String(i + 1), w.client, formatMs(w.expiresInMs), w.owner]);
      lines.push(indent(table(['#', 'PARTY', 'LEASE', 'ID'], body)));
    }
    return lines.join('\n');
  }
  if (state.kind === 'election') {
    const leader = state.holders.find((h) => h.value !== undefined);
    lines.push(`  leader   ${leader ? `${printable(leader.client)}  value "${printable(leader.value!)}"  epoch ${leader.token}` : '(none)'}`);
  }
  if (state.permits !== undefined) {
    const used = state.holders.reduce((sum, h) => sum + (h.permits ?? 0), 0);
    lines.push(`  permits  ${used} of ${state.permits} in use`);
  }
  lines.push(`  holders  ${state.holders.length}`);
  if (state.holders.length > 0) {
    const body = state.holders.map((h) => [
      h.client, h.side ?? '', String(h.holds), h.permits === undefined ? '' : String(h.permits), String(h.token), formatMs(h.remainingMs),
      h.handoffUnconfirmed ? 'hand-off unconfirmed' : '', h.owner,
    ]);
    lines.push(indent(table(['HOLDER', 'SIDE', 'HOLDS', 'PERMITS', 'TOKEN', 'LEASE', 'STATE', 'OWNER'], body)));
  }
  lines.push(`  ${state.kind === 'election' ? 'candidates' : 'waiters '} ${state.waiters.length}`);
  if (state.waiters.length > 0) {
    const body = state.waiters.map((w, i) => [
      String(i + 1), w.client, w.side ?? '', w.permits === undefined ? '' : String(w.permits), formatMs(w.expiresInMs), w.owner,
    ]);
    lines.push(indent(table(['#', 'WAITER', 'SIDE', 'PERMITS', 'VALID', 'OWNER'], body)));
  }
  return lines.join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

/** A message (a failure, a confirmation, what `release` did) as printed: escaped (`printable`), so it stays one line. */
export function message(text: string): string {
  return printable(text);
}

/** `message(text)` and its newline. */
export function messageLine(text: string): string {
  return `${printable(text)}\n`;
}

/** The first line of a `watch` frame; the prefix escaped (`printable`) like any text the command prints. */
export function watchHeader(prefix: string, held: number, handoffsPerSecond: number, handoffs: number, lost: number, at: Date): string {
  return (
    `holdfast watch  prefix ${printable(prefix)}  ${held} held  hand-offs/s ${handoffsPerSecond.toFixed(1)}  ` +
    `hand-offs since start ${handoffs}  lost since start ${lost}  ${at.toISOString().slice(11, 19)}`
  );
}

/** The `--json` text of `value`: exact, every control character escaped by JSON (`printableJson`). */
export function json(value: unknown): string {
  return `${printableJson(value)}\n`;
}
