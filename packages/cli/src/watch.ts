import { HandoffCounter } from './handoffs.js';
import { lockTable, watchHeader } from './render.js';
import { snapshot, type LockState } from './snapshot.js';
import type { Client } from './connect.js';

/** Options of `holdfast watch`. */
export interface WatchOptions {
  /** Lock names to show (a glob), all by default. */
  readonly pattern?: string | undefined;
  /** Time between refreshes, in ms. */
  readonly intervalMs: number;
  /** Stop after this many refreshes (unbounded when absent). */
  readonly iterations?: number | undefined;
  /** Ends the watch early (SIGINT). */
  readonly signal: AbortSignal;
}

/** Where the watch draws: a terminal gets the alternate screen, anything else a frame per refresh. */
export interface Screen {
  /** True for a terminal. */
  readonly isTTY?: boolean;
  /** Its width in columns, when a terminal. */
  readonly columns?: number;
  /** Writes text. */
  write(text: string): unknown;
}

// Alternate screen on, cursor hidden; and the reverse, which leaves the terminal as it was.
const ENTER = '\x1b[?1049h\x1b[?25l';
const LEAVE = '\x1b[?25h\x1b[?1049l';
const HOME_AND_CLEAR = '\x1b[H\x1b[J';

/** What changed between two refreshes. */
export interface ChangeCount {
  /** Holders gone after their lease ran out. */
  readonly lost: number;
}

/**
 * Counts, between two refreshes, lost leases (a holder gone after its lease
 * had run out by the server's clock, rather than released before). Hand-offs
 * are counted from the scripts' own messages (`HandoffCounter`).
 */
export class Changes {
  /** Lost leases seen since the first refresh. */
  lost = 0;
  #previous = new Map<string, { at: number; holders: Map<string, number> }>();

  /** Compares with the previous refresh, taken `at` ms (monotonic) ago. */
  update(states: readonly LockState[], at: number): ChangeCount {
    let lost = 0;
    const next = new Map<string, { at: number; holders: Map<string, number> }>();
    for (const state of states) {
      const key = `${state.kind}\u0000${state.name}`;
      const holders = new Map(state.holders.map((h) => [h.owner, h.remainingMs]));
      next.set(key, { at, holders });
      const before = this.#previous.get(key);
      if (!before) continue;
      for (const [owner, remainingMs] of before.holders) if (!holders.has(owner) && remainingMs <= at - before.at) lost++;
    }
    // A lock gone from the list: its holders left; those whose lease had run out were lost.
    for (const [key, before] of this.#previous) {
      if (next.has(key)) continue;
      for (const remainingMs of before.holders.values()) if (remainingMs <= at - before.at) lost++;
    }
    this.#previous = next;
    this.lost += lost;
    return { lost };
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Draws the table every `intervalMs` until the signal aborts or the iterations are done. */
export async function watch(redis: Client, prefix: string, options: WatchOptions, screen: Screen): Promise<void> {
  const changes = new Changes();
  const handoffs = new HandoffCounter(redis, prefix);
  let last = performance.now();
  let lastHandoffs = 0;
  if (screen.isTTY) screen.write(ENTER);
  try {
    for (let i = 0; !options.signal.aborted && (options.iterations === undefined || i < options.iterations); i++) {
      if (i > 0) await sleep(options.intervalMs, options.signal);
      if (options.signal.aborted) break;
      const states = await snapshot(redis, prefix, options.pattern);
      await handoffs.follow(states);
      const now = performance.now();
      changes.update(states, now);
      const total = handoffs.count;
      const rate = i === 0 ? 0 : (total - lastHandoffs) / ((now - last) / 1_000);
      last = now;
      lastHandoffs = total;
      const header = watchHeader(prefix, states.length, rate, total, changes.lost, new Date());
      const body = states.length === 0 ? '(nothing held)' : lockTable(states, screen.isTTY ? screen.columns : undefined);
      screen.write(screen.isTTY ? `${HOME_AND_CLEAR}${header}\n\n${body}\n` : `${header}\n${body}\n\n`);
    }
  } finally {
    handoffs.close();
    if (screen.isTTY) screen.write(LEAVE);
  }
}
