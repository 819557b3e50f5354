import { codeOf, type AcquireMessage, type SyncMessage } from './messages.js';

/**
 * What an acquisition ended as, the `holdfast.lock.outcome` of its wait and span. An idempotency
 * key's or a flight's claim: `replayed` when a stored result answered (another call ran `fn`),
 * `conflict` for another fingerprint, `in-progress` when its wait ran out.
 */
export type AcquireOutcome = 'acquired' | 'busy' | 'timeout' | 'aborted' | 'error' | 'replayed' | 'conflict' | 'in-progress';

/** What an acquisition ended as. */
export function acquireOutcome(message: AcquireMessage): AcquireOutcome {
  const stored = message.kind === 'idempotency' || message.kind === 'single-flight';
  if (message.error === undefined) return message.result ? 'acquired' : stored ? 'replayed' : 'busy';
  if (abortedByCaller(message)) return 'aborted';
  switch (codeOf(message.error)) {
    case 'ERR_LOCK_TIMEOUT':
      return 'timeout';
    case 'ERR_IDEMPOTENCY_CONFLICT':
      return 'conflict';
    case 'ERR_IDEMPOTENCY_IN_PROGRESS':
      return 'in-progress';
    default:
      return 'error';
  }
}

/** What a latch or barrier operation ended as, the `holdfast.lock.outcome` of its duration and span. */
export type SyncOutcome = 'ok' | 'timeout' | 'broken' | 'aborted' | 'error';

/** What a latch or barrier operation ended as (`broken`: a barrier's generation broke). */
export function syncOutcome(message: SyncMessage): SyncOutcome {
  if (message.error === undefined) return 'ok';
  if (abortedByCaller(message)) return 'aborted';
  const code = codeOf(message.error);
  if (code === 'ERR_LOCK_TIMEOUT') return 'timeout';
  return code === 'ERR_BARRIER_BROKEN' ? 'broken' : 'error';
}

/**
 * True when the operation ended because the caller's `signal` aborted.
 * Core rejects with `signal.reason`, which can be any value (an Error of the
 * caller's, a holdfast error chained from a lease's signal), so the error's
 * class alone cannot tell. When the context names the caller's signal, the
 * answer is exact: it aborted and the rejection is its reason. Otherwise
 * only the reasons `AbortSignal` makes itself are certain: `abort()` with no
 * reason (an `AbortError`) and `AbortSignal.timeout()` (a `TimeoutError`
 * DOMException). Core makes neither, and wraps every error a Redis client
 * throws, so they come from the caller's signal only.
 */
function abortedByCaller(message: { readonly signal?: unknown; readonly error?: unknown }): boolean {
  const { signal, error } = message;
  if (signal instanceof AbortSignal) return signal.aborted && error === signal.reason;
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || (error instanceof DOMException && name === 'TimeoutError');
}
