/**
 * Programs the model-based tests run: sibling tasks (run with Promise.all),
 * each a list of steps on 2–3 LockClients sharing one Redis. Plain data, so a
 * shrunk counterexample prints as a program that can be pasted into a
 * regression test.
 */

export type LockName = 'a' | 'b' | 'c';

/** Lock names in the order nested sections take them (no cycle, so no deadlock between chains). */
export const LOCK_ORDER: readonly LockName[] = ['a', 'b', 'c'];

/** How a section takes its lock. */
export type Via = 'acquire' | 'try' | 'withLock';

/**
 * How a section ends.
 * - `release`: release (withLock: return).
 * - `extend`: extend, then release (withLock: extend, return).
 * - `releaseTwice`: release, then release again (withLock: the callback releases its own lease twice).
 * - `releaseExtend`: release, then extend the released lease.
 * - `expire`: a short lease is left to run out, then released / extended (withLock: returns after it ran out).
 * - `throw`: withLock's callback throws (bare leases: release).
 */
export type End = 'release' | 'extend' | 'releaseTwice' | 'releaseExtend' | 'expire' | 'throw';

/** Take a lock, run `body` holding it, end it. */
export interface Section {
  readonly op: 'section';
  readonly via: Via;
  readonly client: number;
  readonly lock: LockName;
  /** A lease of a few hundred ms (SHORT_LEASE_MS) instead of the client's. */
  readonly short: boolean;
  /** Pass an AbortSignal that a scheduler-chosen moment aborts. */
  readonly abort: boolean;
  readonly body: readonly Step[];
  readonly end: End;
}

/** Start sibling tasks from here (they inherit this chain's withLock frames) and wait for all. */
export interface Spawn {
  readonly op: 'spawn';
  readonly tasks: readonly (readonly Step[])[];
}

/** Close a client, with or without releasing its leases. */
export interface Close {
  readonly op: 'close';
  readonly client: number;
  readonly release: boolean;
}

/**
 * Block the event loop for `ms` (a garbage-collection pause or a CPU-bound
 * callback): replies, hand-offs and lease deadlines all pile up behind it.
 */
export interface Stall {
  readonly op: 'stall';
  readonly ms: number;
}

export type Step = Section | Spawn | Close | Stall;

export interface Program {
  /** LockClients, each over its own ioredis client (2 or 3). */
  readonly clients: number;
  /** Top-level sibling tasks. */
  readonly tasks: readonly (readonly Step[])[];
}

/** Compact one-line-per-step rendering, for failure messages and regression tests. */
export function formatProgram(program: Program): string {
  const lines = [`clients: ${program.clients}`];
  program.tasks.forEach((task, i) => {
    lines.push(`task ${i}:`);
    formatSteps(task, '  ', lines);
  });
  return lines.join('\n');
}

function formatSteps(steps: readonly Step[], indent: string, lines: string[]): void {
  for (const step of steps) {
    switch (step.op) {
      case 'section':
        lines.push(
          `${indent}${step.via}(c${step.client}, ${step.lock}${step.short ? ', short' : ''}${step.abort ? ', abort' : ''}) -> ${step.end}`,
        );
        formatSteps(step.body, `${indent}  `, lines);
        break;
      case 'spawn':
        lines.push(`${indent}spawn ${step.tasks.length}:`);
        step.tasks.forEach((task, i) => {
          lines.push(`${indent}  [${i}]`);
          formatSteps(task, `${indent}    `, lines);
        });
        break;
      case 'close':
        lines.push(`${indent}close(c${step.client}${step.release ? ', release' : ''})`);
        break;
      case 'stall':
        lines.push(`${indent}stall(${step.ms} ms)`);
        break;
    }
  }
}

/**
 * Makes a generated program well-formed: client indexes below `clients`, and
 * every nested section on a lock its chain already holds or on one after all
 * of them (LOCK_ORDER), so no two chains can wait for each other in a cycle.
 * A lock out of order becomes the highest lock the chain holds.
 */
export function normalizeProgram(program: Program): Program {
  const fix = (steps: readonly Step[], held: readonly LockName[]): Step[] =>
    steps.map((step): Step => {
      switch (step.op) {
        case 'close':
          return { ...step, client: step.client % program.clients };
        case 'stall':
          return step;
        case 'spawn':
          return { ...step, tasks: step.tasks.map((t) => fix(t, held)) };
        case 'section': {
          const highest = Math.max(-1, ...held.map((l) => LOCK_ORDER.indexOf(l)));
          const lock = held.includes(step.lock) || LOCK_ORDER.indexOf(step.lock) > highest ? step.lock : LOCK_ORDER[highest]!;
          return { ...step, client: step.client % program.clients, lock, body: fix(step.body, [...held, lock]) };
        }
      }
    });
  return { clients: program.clients, tasks: program.tasks.map((t) => fix(t, [])) };
}
