import { performance } from 'node:perf_hooks';
import { RenewedClaim } from '../engine/renewed-claim.js';
import { onAbort } from '../port/abort-listeners.js';
import { publishInbox } from '../telemetry/kind-channels.js';
import { nextCall, renewCall, type HandedMessage, type InboxTarget, type NextSettings, type InboxEngine } from './inbox-calls.js';
import type { InboxDeadReason, InboxEvents } from './inbox-events.js';
import type { ResolvedInboxOptions } from './inbox-options.js';

/** The longest retry delay, in ms. */
const MAX_RETRY_DELAY_MS = 60_000;

/** What a processor needs of its inbox. */
export interface ProcessorHost<T> {
  readonly engine: InboxEngine;
  readonly name: string;
  readonly options: ResolvedInboxOptions<T>;
  /** Aborts when the inbox closes. */
  readonly closing: AbortSignal;
  emit<K extends keyof InboxEvents<T>>(event: K, ...args: InboxEvents<T>[K]): void;
}

/** A key this process just claimed: its lease's owner and token, and when the lease may end (monotonic ms). */
export interface ClaimedKey {
  readonly target: InboxTarget;
  readonly owner: string;
  readonly token: number;
  readonly deadline: number;
}

/**
 * Sleeps `ms`, or less when `signal` aborts; never rejects. The timer is
 * cleared either way, so nothing of it outlives the processor.
 */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stopListening();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stopListening = onAbort(signal, done);
  });
}

/**
 * Drains one key while this process holds its lease: hands the messages to
 * the handler in post order, removes each call's messages once it resolved
 * (in the same call that hands the next ones), and releases the key in the
 * call that finds its queue empty. Resolves once it stopped: the queue was
 * empty, the lease was lost, or the inbox closed (the key is then given back
 * at once, its pending messages kept for the next processor).
 */
export async function runProcessor<T>(host: ProcessorHost<T>, claimed: ClaimedKey): Promise<void> {
  const { engine, options } = host;
  const { target, owner, token } = claimed;
  const { key } = target;
  const claim = new RenewedClaim(engine, {
    kind: 'inbox',
    key: `${host.name}:${key}`,
    token,
    ttlMs: options.leaseMs,
    deadline: claimed.deadline,
    renew: (ms, limits) => renewCall(engine, target, owner, token, ms, limits),
  });
  engine.emitLazily('acquired', () => ({ name: `${host.name}:${key}`, token, holdCount: 1, waitedMs: 0, reentrant: false, kind: 'inbox' }));
  // The handler's signal: the claim's loss, or the inbox's close. The close signal is shared by
  // every processor of the inbox (up to `concurrency` at once): one listener on it, many callbacks.
  const controller = new AbortController();
  const stopOnClose = () => controller.abort(host.closing.reason);
  const offLoss = onAbort(claim.view.signal, () => controller.abort(claim.view.signal.reason));
  const offClose = onAbort(host.closing, stopOnClose);
  const signal = controller.signal;
  if (host.closing.aborted) stopOnClose();
  host.emit('claimed', { key, token });

  const settings: NextSettings = {
    ttlMs: options.ttlMs,
    maxAttempts: options.maxAttempts,
    debounceMs: options.mode === 'debounce' ? options.debounceMs : 0,
  };
  const most = options.mode === 'each' ? 1 : options.maxBatch;
  let lastSeq = 0;
  let lastError: unknown;
  let lastErrorSeq = 0;
  let ended: 'released' | 'lost' | undefined;
  let failures = 0;
  try {
    while (!signal.aborted) {
      let outcome;
      try {
        outcome = await nextCall(engine, target, owner, token, lastSeq, most, settings);
        failures = 0;
      } catch (error) {
        // Redis did not answer: tried again while the lease lasts (its loss stops the loop); lastSeq is kept.
        host.emit('error', error);
        await pause(Math.min(options.leaseMs / 3, 50 * 2 ** Math.min(failures++, 6)), signal);
        continue;
      }
      lastSeq = 0;
      if (outcome.kind === 'lost' || outcome.kind === 'released') {
        ended = outcome.kind;
        break;
      }
      // Closed or lost meanwhile: nothing more is handed to the handler.
      if (signal.aborted) break;
      if (outcome.kind === 'wait') {
        await pause(outcome.ms, signal);
        continue;
      }
      const handed = outcome.messages;
      if (handed.length === 0) continue;
      if (handed[0]!.dead !== 0) {
        for (const m of handed) {
          const reason: InboxDeadReason = m.dead === 1 ? 'ttl' : 'attempts';
          const error = reason === 'attempts' && m.seq <= lastErrorSeq ? lastError : undefined;
          emitDead(host, key, m, reason, error);
        }
        lastSeq = handed[handed.length - 1]!.seq;
        continue;
      }
      const batch: T[] = [];
      const used: HandedMessage[] = [];
      for (const m of handed) {
        let message: T;
        try {
          message = options.deserialize(m.stored);
        } catch (error) {
          if (used.length > 0) break;
          // Unreadable at the head: dropped with its event (no handler call could read it either).
          emitDead(host, key, m, 'malformed', error);
          lastSeq = m.seq;
          break;
        }
        batch.push(message);
        used.push(m);
      }
      if (used.length === 0) continue;
      const attempt = Math.max(...used.map((m) => m.attempt));
      const last = used[used.length - 1]!.seq;
      const started = performance.now();
      try {
        await options.handler!(key, batch, { token, signal, attempt });
        // Ended by a loss or a close while it ran: not counted as handled, its messages stay pending.
        if (signal.aborted) break;
      } catch (error) {
        if (signal.aborted) break;
        if (attempt >= options.maxAttempts) {
          for (const m of used) emitDead(host, key, m, 'attempts', error);
          lastSeq = last;
          continue;
        }
        const delayMs = Math.min(MAX_RETRY_DELAY_MS, options.retryDelayMs * 2 ** (attempt - 1));
        lastError = error;
        lastErrorSeq = last;
        host.emit('retried', { key, attempt, error, delayMs });
        publishInbox(() => ({ name: host.name, kind: 'inbox', clientId: engine.clientId, outcome: 'retried', count: used.length, attempt }));
        await pause(delayMs, signal);
        continue;
      }
      const queueWaitMs = Math.max(0, outcome.serverMs - used[0]!.postedMs);
      const durationMs = Math.round(performance.now() - started);
      host.emit('handled', { key, count: used.length, attempt, token, queueWaitMs, durationMs });
      publishInbox(() => ({ name: host.name, kind: 'inbox', clientId: engine.clientId, outcome: 'handled', count: used.length, attempt, queueWaitMs, durationMs }));
      // Removed by the next call, fenced by the lease; after a loss or a close, by the call that gives the key back.
      lastSeq = last;
    }
    if (ended === undefined) {
      // Closed, or the lease lost here (it may still be this processor's in Redis): give the key
      // back now, removing what was handled if the lease still is this processor's.
      const outcome = await nextCall(engine, target, owner, token, lastSeq, 0, settings).catch((error: unknown) => {
        host.emit('error', error);
        return undefined;
      });
      ended = outcome?.kind === 'released' ? 'released' : 'lost';
    }
  } finally {
    offLoss();
    offClose();
    const lostReason = claim.lostReason();
    claim.stop();
    if (ended === 'released') host.emit('released', { key, token });
    else host.emit('lost', { key, token, error: lostReason ?? signal.reason });
  }
}

function emitDead<T>(host: ProcessorHost<T>, key: string, m: HandedMessage, reason: InboxDeadReason, error: unknown): void {
  let message: T | undefined;
  if (reason !== 'malformed') {
    try {
      message = host.options.deserialize(m.stored);
    } catch {
      message = undefined;
    }
  }
  const attempts = m.attempt;
  publishInbox(() => ({ name: host.name, kind: 'inbox', clientId: host.engine.clientId, outcome: 'dead', count: 1, attempt: attempts, reason }));
  host.emit('dead', error === undefined ? { key, message, stored: m.stored, reason, attempts } : { key, message, stored: m.stored, reason, attempts, error });
}
