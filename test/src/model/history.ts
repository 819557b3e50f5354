/**
 * The history a chaos run is judged on: every worker (in this process or a
 * child) records what it invoked and what it was told, stamped with
 * `process.hrtime.bigint()`. CLOCK_MONOTONIC is one clock for every process on
 * a Linux host, so events of different processes can be ordered in real time.
 */
export type EventType =
  | 'acquire-invoke'
  | 'acquire-ok'
  | 'acquire-fail'
  | 'renew'
  | 'lost'
  | 'release-invoke'
  | 'release-ok'
  | 'release-fail'
  | 'write-invoke'
  | 'write-ok'
  | 'counter-read'
  | 'counter-write';

export interface HistoryEvent {
  /** Monotonic time in ns (shared by every process of the host). */
  t: bigint;
  /** One sequential actor: a worker loop of one process. Its events are in program order. */
  holder: string;
  /** The lock name (for writes and counter steps: the lock they are made under). */
  lock: string;
  /** For writes and counter steps: the key they target. */
  resource?: string;
  type: EventType;
  token?: number;
  holdCount?: number;
  reason?: string;
  accepted?: boolean;
  value?: number;
}

/** The line form: `t` as a decimal string (JSON has no bigint). */
export type HistoryLine = Omit<HistoryEvent, 't'> & { t: string };

export function toLine(event: HistoryEvent): string {
  return JSON.stringify({ ...event, t: event.t.toString() });
}

/** Parses JSON lines, ignoring blank ones; a line that is not an event throws. */
export function parseLines(text: string): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const raw = JSON.parse(line) as Partial<HistoryLine>;
    if (typeof raw.t !== 'string' || typeof raw.type !== 'string' || typeof raw.holder !== 'string') {
      throw new Error(`not a history event: ${line}`);
    }
    events.push({ ...(raw as HistoryLine), t: BigInt(raw.t) });
  }
  return events;
}

/** Orders merged histories by time; ties keep the input order (program order within a holder). */
export function mergeHistories(...histories: HistoryEvent[][]): HistoryEvent[] {
  return histories
    .flat()
    .map((event, index) => ({ event, index }))
    .sort((a, b) => (a.event.t < b.event.t ? -1 : a.event.t > b.event.t ? 1 : a.index - b.index))
    .map(({ event }) => event);
}

/** Records events of actors living in this process. */
export class HistoryRecorder {
  readonly events: HistoryEvent[] = [];

  record(holder: string, lock: string, type: EventType, fields: Partial<HistoryEvent> = {}): HistoryEvent {
    const event: HistoryEvent = { ...fields, t: process.hrtime.bigint(), holder, lock, type };
    this.events.push(event);
    return event;
  }
}
