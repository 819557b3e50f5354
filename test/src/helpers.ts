import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { reservePort } from './ports.js';

export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** A function is evaluated at timeout, to describe the state at that moment. */
  message?: string | (() => string);
}

/**
 * A loopback port nothing listens on, reserved for this process until it exits (so no harness
 * server takes it) and outside the ephemeral range (so no connection binds it): connections to
 * it are refused.
 */
export function closedPort(): Promise<number> {
  return reservePort();
}

export function sleep(ms: number): Promise<void> {
  return delay(ms);
}

/**
 * Polls instead of relying on fixed sleeps so tests stay fast on quick
 * machines and still pass on slow CI runners.
 */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  options: WaitForOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await predicate()) return;
      lastError = undefined;
    } catch (error) {
      // A throwing predicate usually means "not yet" (e.g. a connection that is
      // still coming up); keep the error so a timeout explains itself.
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const custom = typeof options.message === 'function' ? options.message() : options.message;
      const base = custom ?? `waitFor: condition not met within ${timeoutMs} ms`;
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(base + cause, { cause: lastError });
    }
    await delay(intervalMs);
  }
}

/** Random suffix keeps parallel workers sharing one Redis from colliding. */
/**
 * Blocks the event loop for `ms`, as a long synchronous task, a GC pause or a
 * frozen process does: no timer, reply or message is handled meanwhile.
 */
export function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy on purpose.
  }
}

export function uniqueName(prefix = 'test'): string {
  return `${prefix}:${randomBytes(8).toString('hex')}`;
}

/**
 * Command name -> number of calls since the last CONFIG RESETSTAT. Used to
 * assert how many round trips / scripts a code path really issued.
 * Subcommands keep Redis' own spelling, e.g. 'client|setname'.
 */
export async function commandStats(redis: Redis): Promise<Record<string, number>> {
  const text = await redis.info('commandstats');
  const stats: Record<string, number> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):.*?\bcalls=(\d+)/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) {
      stats[match[1].toLowerCase()] = Number(match[2]);
    }
  }
  return stats;
}

/** Only commands whose count changed are kept, so assertions read naturally. */
export function commandStatsDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after)) {
    const diff = calls - (before[name] ?? 0);
    if (diff !== 0) delta[name] = diff;
  }
  return delta;
}

// Transient requests (fs ops, DNS lookups, pending closes) finish on their own
// and stdio TTYs are ambient; counting them would make leak checks flaky.
const TRANSIENT = /(Req|ReqWrap|ReqCallback|ReqPromise|ShutdownWrap|WriteWrap)$/;
const AMBIENT = new Set(['TTYWrap']);

/** Raw list from Node, for printing when a leak assertion fails. */
export function activeResources(): string[] {
  return process.getActiveResourcesInfo();
}

/**
 * Number of ref'd handles/timers that would keep the event loop alive.
 * Compare against a baseline taken before the code under test ran: the test
 * runner itself owns a few handles.
 */
export function activeHandleCount(): number {
  return activeResources().filter((name) => !TRANSIENT.test(name) && !AMBIENT.has(name)).length;
}
