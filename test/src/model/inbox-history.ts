/** One line an inbox worker process reported on stdout (packages/core/test/inbox/worker.mjs). */
export interface InboxLine {
  readonly ev: 'ready' | 'p' | 'e' | 'posted' | 'dead' | 'retry' | 'held' | 'lost';
  readonly key?: string;
  readonly id?: string;
  readonly ids?: string[];
  readonly token?: number;
  readonly pid?: number;
}

/** One entry of an inbox key's log in Redis: a handler call's start or end, as it happened. */
export interface InboxLogEntry {
  readonly ev: 's' | 'e';
  readonly ids: readonly string[];
  readonly token: number;
  readonly pid: number;
}

interface Call {
  readonly ids: readonly string[];
  readonly token: number;
  readonly pid: number;
  readonly started: number;
  ended: number | undefined;
}

/**
 * Checks an inbox history: `posted`, the ids whose post resolved; `logs`,
 * each key's calls in the order they started and ended (the inbox's worker.mjs writes
 * them to Redis, so the order is the real one). `stale(pid)` names the
 * processes that were frozen or killed (their lease could run out under
 * them). Returns the violations:
 *  - a stored message never handled to the end;
 *  - a message handled again after a call of it had ended, unless that call's process was stale
 *    (redelivery is only for calls that did not finish in time);
 *  - two calls of one key at once, unless the earlier one's process was stale and the later one
 *    has the greater token (a takeover);
 *  - per key and poster, messages first handled out of their post order.
 */
export function checkInboxHistory(posted: ReadonlySet<string>, logs: ReadonlyMap<string, readonly InboxLogEntry[]>, stale: (pid: number) => boolean = () => false): string[] {
  const problems: string[] = [];
  const byId = new Map<string, Call[]>();
  for (const [key, entries] of logs) {
    const open: Call[] = [];
    const handledOnce = new Set<string>();
    const lastOfPoster = new Map<string, number>();
    entries.forEach((entry, at) => {
      if (entry.ev === 's') {
        for (const other of open) {
          if (!(stale(other.pid) && other.token < entry.token)) problems.push(`calls of ${key} overlap: token ${other.token} and ${entry.token}`);
        }
        const call: Call = { ids: entry.ids, token: entry.token, pid: entry.pid, started: at, ended: undefined };
        open.push(call);
        for (const id of entry.ids) {
          byId.set(id, [...(byId.get(id) ?? []), call]);
          if (handledOnce.has(id)) continue;
          handledOnce.add(id);
          const [poster, i] = id.split(':') as [string, string];
          if ((lastOfPoster.get(poster) ?? -1) > Number(i)) problems.push(`message ${id} of ${key} first handled after a later post of its poster`);
          lastOfPoster.set(poster, Number(i));
        }
      } else {
        const call = open.find((c) => c.token === entry.token && c.pid === entry.pid);
        if (!call) {
          problems.push(`end without start at ${key} (token ${entry.token})`);
          return;
        }
        call.ended = at;
        open.splice(open.indexOf(call), 1);
      }
    });
  }
  for (const id of posted) {
    const calls = byId.get(id) ?? [];
    if (!calls.some((c) => c.ended !== undefined)) problems.push(`message ${id} stored and never handled`);
    for (let i = 1; i < calls.length; i++) {
      const earlier = calls[i - 1]!;
      if (earlier.ended !== undefined && earlier.ended < calls[i]!.started && !stale(earlier.pid)) {
        problems.push(`message ${id} handled again after a call that finished (tokens ${earlier.token}, ${calls[i]!.token})`);
      }
    }
  }
  return problems;
}
