import { inboxIndexes, inboxKeys } from '@holdfast/core/keys';
import type { Client } from './connect.js';

/** One key of an inbox, as `holdfast inbox` shows it. */
export interface InboxKeyRow {
  /** The key (a conversation, a thread). */
  readonly key: string;
  /** Messages pending (the one being handled included). */
  readonly pending: number;
  /** The processor's fencing token, or null when nobody processes the key. */
  readonly processorToken: number | null;
  /** The processor's lease time left, in ms, or null. */
  readonly leaseTtlMs: number | null;
  /** How long the oldest pending message has waited, in ms (server time). */
  readonly oldestAgeMs: number | null;
}

/** The largest number of keys read per index (one page). */
const PAGE = 10_000;

/**
 * The keys of inbox `name` with pending messages, read with plain read commands
 * (ZRANGE of each slot's index, HGET, LINDEX, GET, PTTL, TIME): nothing is written.
 * The layout is the scripts' (see @holdfast/core's inbox-keys.ts).
 */
export async function readInbox(redis: Client, prefix: string, name: string): Promise<InboxKeyRow[]> {
  const [seconds, micros] = (await redis.call('TIME')) as [string, string];
  const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const members = (await Promise.all(inboxIndexes(prefix, name).map((index) => redis.zrange(index, '0', String(PAGE - 1))))).flat();
  const rows = await Promise.all(
    members.map(async (key): Promise<InboxKeyRow> => {
      const keys = inboxKeys(prefix, name, key);
      const [count, head, lease, pttl] = await Promise.all([redis.hget(keys.attempts, 'n'), redis.lindex(keys.queue, 0), redis.get(keys.lease), redis.pttl(keys.lease)]);
      const token = lease ? Number(/^i1\|(\d+)\|/.exec(lease)?.[1] ?? NaN) : NaN;
      const posted = head ? Number(/^\d+\|(\d+)\|/.exec(head)?.[1] ?? NaN) : NaN;
      return {
        key,
        pending: head ? Number(count ?? 0) : 0,
        processorToken: Number.isFinite(token) ? token : null,
        leaseTtlMs: Number.isFinite(token) && pttl >= 0 ? pttl : null,
        oldestAgeMs: Number.isFinite(posted) ? Math.max(0, nowMs - posted) : null,
      };
    }),
  );
  return rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The rows as a plain table. */
export function inboxTable(rows: readonly InboxKeyRow[]): string {
  const lines = [['KEY', 'PENDING', 'PROCESSOR', 'LEASE', 'OLDEST']];
  for (const row of rows) {
    lines.push([
      JSON.stringify(row.key).slice(1, -1),
      String(row.pending),
      row.processorToken === null ? '-' : `token ${row.processorToken}`,
      row.leaseTtlMs === null ? '-' : `${row.leaseTtlMs} ms`,
      row.oldestAgeMs === null ? '-' : `${row.oldestAgeMs} ms`,
    ]);
  }
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines.map((l) => l.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
