import type { HistoryEvent } from './history.js';

/**
 * A multi-lock in a history: one event for the whole set, carrying every name
 * (`locks`) and, on `acquire-ok`, each name's token (`tokens`, same order).
 */
export type MultiLockEvent = HistoryEvent & { readonly locks?: readonly string[]; readonly tokens?: readonly number[] };

/**
 * Rewrites multi-lock events as one event per name, so the checker judges
 * every name of a multi-lock as a lock of its own: a multi-lock holds each of
 * its names exclusively (against plain locks and other multi-locks on it) from
 * its `acquire-ok` to its release or `lost`, with that name's token. A `lost`
 * of any part ends the holder's belief in every part (the lease's one signal).
 */
export function expandMultiLock(history: readonly MultiLockEvent[]): HistoryEvent[] {
  const expanded: HistoryEvent[] = [];
  for (const event of history) {
    const { locks, tokens, ...rest } = event;
    if (!locks) {
      expanded.push(rest);
      continue;
    }
    locks.forEach((lock, i) => {
      expanded.push({ ...rest, lock, ...(tokens ? { token: tokens[i]! } : {}) });
    });
  }
  return expanded;
}
