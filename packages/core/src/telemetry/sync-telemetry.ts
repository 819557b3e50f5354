import { tracingChannel } from 'node:diagnostics_channel';

/** The diagnostics channel of latch and barrier operations (a `TracingChannel`, as `holdfast:acquire`). */
export const SYNC_CHANNEL = 'holdfast:sync';

/** Context of `holdfast:sync`: one operation of a count-down latch or a barrier. */
export interface SyncMessage {
  /** The latch's or barrier's name. */
  readonly name: string;
  /** What it is. */
  readonly kind: 'latch' | 'barrier';
  /** The method called. */
  readonly operation: 'trySetCount' | 'countDown' | 'wait' | 'countDownAndWait' | 'arrive';
  /** The calling `LockClient`'s id. */
  readonly clientId: string;
  /** The caller's `signal` option, when it gave one. */
  readonly signal?: AbortSignal;
  /**
   * Set on success: what the method resolved with (`countDown`: the count
   * after it; `trySetCount`: whether it set; `arrive`: `{ generation }`).
   */
  result?: unknown;
  /** Set on failure: what the method rejected with. */
  error?: unknown;
}

const syncChannel = tracingChannel<unknown, SyncMessage>(SYNC_CHANNEL);

/** Runs `run`, traced on `holdfast:sync` with the context `message()` builds only when someone listens. */
export function traceSync<T>(message: () => SyncMessage, run: () => Promise<T>): Promise<T> {
  const ch = syncChannel;
  const listened =
    ch.start.hasSubscribers || ch.end.hasSubscribers || ch.asyncStart.hasSubscribers || ch.asyncEnd.hasSubscribers || ch.error.hasSubscribers;
  if (!listened) return run();
  return ch.tracePromise(run, message());
}
