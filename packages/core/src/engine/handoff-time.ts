/** When a hand-off happened, as far as the waiter that receives it can tell (the acquire loop's reading of a hand-off message). */

/**
 * A hand-off announced before the last queued attempt ran (read late, after a
 * pause) is stale: that attempt was answered busy, so the claim it made had
 * already run out and gone to someone else. Starting on it would put two
 * holders in their sections (found by the protocol model, test/model). At the
 * same server millisecond the hand-off came after the attempt: a claim seen by
 * the attempt would have been granted to it, and a claim cannot run out within
 * the same millisecond it was made.
 */
export function isStale(handoffServerMs: number | undefined, busyServerMs: number | undefined): boolean {
  return handoffServerMs !== undefined && busyServerMs !== undefined && handoffServerMs < busyServerMs;
}

/**
 * The earliest local time a hand-off can have happened. The queued attempt
 * sent at `busyAt` ran on the server at server time `busyServerMs`, no earlier
 * than `busyAt`; the hand-off ran `handoffServerMs - busyServerMs` later by the
 * server's clock. Counting the claim from `busyAt` alone would date it a whole
 * wait too early (a waiter queued behind a 30 s lease would start with nothing
 * left). The elapsed server time is clamped to what the local clock allows, so
 * a server clock stepping backwards only makes the estimate earlier (safe).
 */
export function handoffStart(busyAt: number, busyServerMs: number | undefined, handoffServerMs: number | undefined, now: number): number {
  if (busyServerMs === undefined || handoffServerMs === undefined) return busyAt;
  return busyAt + Math.max(0, Math.min(handoffServerMs - busyServerMs, now - busyAt));
}
