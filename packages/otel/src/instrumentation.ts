import { channel, tracingChannel } from 'node:diagnostics_channel';
import {
  context,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type MeterProvider,
  type Span,
  type TracerProvider,
} from '@opentelemetry/api';
import { containing, type Attempt } from './contain.js';
import { HeldCount } from './held.js';
import {
  CHANNELS,
  codeOf,
  type AcquireMessage,
  type ExtendMessage,
  type InboxMessage,
  type LockMessage,
  type LostMessage,
  type ReleaseMessage,
  type RenewalMessage,
  type SyncMessage,
} from './messages.js';
import { acquireOutcome, syncOutcome } from './outcome.js';

/** Options of `instrumentHoldfast()`. */
export interface HoldfastInstrumentationOptions {
  /** Where metrics go. @default the global MeterProvider (`metrics.getMeterProvider()`) */
  readonly meterProvider?: MeterProvider;
  /** Where spans go. @default the global TracerProvider (`trace.getTracerProvider()`) */
  readonly tracerProvider?: TracerProvider;
  /**
   * Adds the lock name as `holdfast.lock.name` to metrics and spans. Off by
   * default: one time series per lock name can be a great many.
   * @default false
   */
  readonly lockNameAttribute?: boolean;
  /** Records spans (acquire, release, extend, renewal ticks). @default true */
  readonly spans?: boolean;
  /**
   * Called with each failure of the instrumentation's own: an instrument's
   * `add()` / `record()` or a span operation that threw (a broken exporter or
   * view). Such a failure never reaches holdfast's call or the process; the
   * operation is still recorded as far as the rest allows. A throwing
   * `onError` is logged on `diag`.
   * @default logs it with OpenTelemetry's `diag.error()`
   */
  readonly onError?: (error: unknown) => void;
}

/** A running instrumentation: `disable()` stops it, `enable()` starts it again. */
export interface HoldfastInstrumentation {
  /**
   * Stops recording: every channel subscription is removed, and the holds
   * `holdfast.lock.held` counted are taken back out of it (their releases
   * would no longer be seen). Does nothing when already disabled.
   */
  disable(): void;
  /**
   * Subscribes again after `disable()`, as a new start: `holdfast.lock.held`
   * counts the holds taken from now on only. Does nothing when enabled.
   */
  enable(): void;
}

/** The instrumentation scope's name. */
export const INSTRUMENTATION_NAME = '@holdfast/otel';

/** Attribute names. */
export const ATTRIBUTES = {
  /** `lock`, `read`, `write`, `semaphore`, `election`, `redlock`, `run-once`, `latch`, `barrier`, `inbox`, …. */
  kind: 'holdfast.lock.kind',
  /** How an operation ended (`acquired`, `busy`, `timeout`, `released`, `lost`, `ok`, …). */
  outcome: 'holdfast.lock.outcome',
  /** Why a lease was lost (`expired`, `taken`, `deleted`, `unreachable`, `closed`), or an inbox message dead (`ttl`, `attempts`, `malformed`). */
  reason: 'holdfast.lock.reason',
  /** The lock name (only with `lockNameAttribute`). */
  name: 'holdfast.lock.name',
  /** `wait` or `try` (spans). */
  mode: 'holdfast.lock.mode',
  /** The fencing token (spans). */
  token: 'holdfast.lock.token',
  /** A latch's or barrier's method: `trySetCount`, `countDown`, `wait`, `countDownAndWait`, `arrive`. */
  operation: 'holdfast.sync.operation',
} as const;

type Phases<T> = { start?: (m: T) => void; end?: (m: T) => void; asyncStart?: (m: T) => void; asyncEnd?: (m: T) => void; error?: (m: T) => void };

/**
 * Turns holdfast's diagnostics_channel messages into OpenTelemetry metrics
 * and spans: every LockClient of the process is observed, from the moment
 * this is called until `disable()`.
 */
export function instrumentHoldfast(options: HoldfastInstrumentationOptions = {}): HoldfastInstrumentation {
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_NAME);
  const tracer = options.spans === false ? undefined : (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_NAME);
  const withName = options.lockNameAttribute === true;
  const attempt = containing(INSTRUMENTATION_NAME, options.onError);

  const waitDuration = meter.createHistogram('holdfast.lock.wait.duration', {
    description: 'Time from the call of acquire() to its outcome, waiting included.',
    unit: 's',
  });
  const holdDuration = meter.createHistogram('holdfast.lock.hold.duration', {
    description: 'Time a hold lasted, from its grant to its release or loss.',
    unit: 's',
  });
  const acquired = meter.createCounter('holdfast.lock.acquired', { description: 'Acquisitions granted (re-entries included).' });
  const lost = meter.createCounter('holdfast.lock.lost', { description: 'Leases that ended without being released, by reason.' });
  const held = meter.createUpDownCounter('holdfast.lock.held', { description: 'Holds this process has now.' });
  const renewalDuration = meter.createHistogram('holdfast.watchdog.renewal.duration', {
    description: 'Time of one watchdog renewal tick (its Redis calls).',
    unit: 's',
  });
  const syncDuration = meter.createHistogram('holdfast.sync.duration', {
    description: 'Time of one count-down latch or barrier operation, from the call to its outcome (waiting included).',
    unit: 's',
  });

  const inboxMessages = meter.createCounter('holdfast.inbox.messages', {
    description: 'Inbox messages by outcome: handled (their handler call resolved), retried (it rejected; tried again), dead (dropped, by reason).',
  });
  const queueWait = meter.createHistogram('holdfast.inbox.queue_wait.duration', {
    description: "Time from a handled call's first message's post to the call's start (Redis's clock).",
    unit: 's',
  });
  const handlerDuration = meter.createHistogram('holdfast.inbox.handler.duration', {
    description: 'Time of one inbox handler call that resolved.',
    unit: 's',
  });

  const attributes = (message: LockMessage, extra: Attributes = {}): Attributes => ({
    [ATTRIBUTES.kind]: message.kind,
    ...(withName && { [ATTRIBUTES.name]: message.name }),
    ...extra,
  });

  // A release or loss counts a hold out only when its acquisition was counted
  // in, so holds taken before this instrumentation started never push it below zero.
  const heldCount = new HeldCount(held, attempt);

  // The span and start time of each operation in flight, by its context object.
  const started = new WeakMap<object, { at: number; span: Span | undefined }>();
  const begin = (message: object, spanName: string, spanAttributes: Attributes) => {
    let span: Span | undefined;
    // Started in the caller's context: its active span is the parent.
    if (tracer) attempt(() => (span = tracer.startSpan(spanName, { kind: SpanKind.INTERNAL, attributes: spanAttributes }, context.active())));
    started.set(message, { at: performance.now(), span });
  };
  /**
   * Ends the operation's span; returns its duration in seconds, undefined
   * when its start was not seen (it began before this instrumentation did).
   * `failed`: whether its error is a failure, for the span's status (an
   * acquisition the caller aborted is not).
   */
  const finish = (message: { error?: unknown }, extra: Attributes = {}, failed = message.error !== undefined): number | undefined => {
    const entry = started.get(message);
    if (!entry) return undefined;
    started.delete(message);
    const { span } = entry;
    if (span) {
      attempt(() => {
        span.setAttributes(extra);
        if (failed) {
          const error = message.error;
          span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        }
      });
      // Ended even when the above failed, so the span is not left open.
      attempt(() => span.end());
    }
    return (performance.now() - entry.at) / 1_000;
  };

  const acquire: Phases<AcquireMessage> = {
    start: (m) => begin(m, 'holdfast.acquire', attributes(m, { [ATTRIBUTES.mode]: m.mode })),
    asyncEnd: (m) => {
      const outcome = acquireOutcome(m);
      const spanAttributes = { [ATTRIBUTES.outcome]: outcome, ...(m.result && { [ATTRIBUTES.token]: m.result.token }) };
      // The caller's abort is its own choice, not a failure: no error status.
      const seconds = finish(m, spanAttributes, outcome === 'timeout' || outcome === 'error');
      if (seconds !== undefined) attempt(() => waitDuration.record(seconds, attributes(m, { [ATTRIBUTES.outcome]: outcome })));
      if (!m.result) return;
      attempt(() => acquired.add(1, attributes(m)));
      // A re-entry adds a hold count to a hold already counted.
      if ((m.result.holdCount ?? 1) === 1) heldCount.countIn(m, attributes(m));
    },
  };
  const release: Phases<ReleaseMessage> = {
    start: (m) => begin(m, 'holdfast.release', attributes(m, { [ATTRIBUTES.token]: m.token })),
    asyncEnd: (m) => {
      const code = codeOf(m.error);
      finish(m, { [ATTRIBUTES.outcome]: m.error === undefined ? 'released' : 'error' });
      // A hold found lost or ended here was counted out by its loss already.
      if (!m.final || code === 'ERR_LOCK_LOST' || code === 'ERR_LOCK_NOT_HELD') return;
      heldCount.countOut(m.acquire);
      const heldMs = m.heldMs;
      if (heldMs !== undefined) attempt(() => holdDuration.record(heldMs / 1_000, attributes(m, { [ATTRIBUTES.outcome]: 'released' })));
    },
  };
  const extend: Phases<ExtendMessage> = {
    start: (m) => begin(m, 'holdfast.extend', attributes(m, { [ATTRIBUTES.token]: m.token })),
    asyncEnd: (m) => {
      finish(m, { [ATTRIBUTES.outcome]: m.error === undefined ? 'extended' : 'error' });
    },
  };
  const renewal: Phases<RenewalMessage> = {
    start: (m) => begin(m, 'holdfast.watchdog.renewal', { 'holdfast.renewal.holds': m.holds }),
    asyncEnd: (m) => {
      const outcome = m.error !== undefined ? 'error' : m.result?.every((r) => r.status === 'renewed') === false ? 'partial' : 'ok';
      const seconds = finish(m, { [ATTRIBUTES.outcome]: outcome });
      if (seconds !== undefined) attempt(() => renewalDuration.record(seconds, { [ATTRIBUTES.outcome]: outcome }));
    },
  };
  const sync: Phases<SyncMessage> = {
    start: (m) => begin(m, `holdfast.${m.kind}.${m.operation}`, attributes(m, { [ATTRIBUTES.operation]: m.operation })),
    asyncEnd: (m) => {
      const outcome = syncOutcome(m);
      // As for an acquisition: the caller's abort is not a failure.
      const seconds = finish(m, { [ATTRIBUTES.outcome]: outcome }, outcome !== 'ok' && outcome !== 'aborted');
      if (seconds !== undefined) {
        attempt(() => syncDuration.record(seconds, attributes(m, { [ATTRIBUTES.operation]: m.operation, [ATTRIBUTES.outcome]: outcome })));
      }
    },
  };
  const onLost = (message: unknown) => {
    const m = message as LostMessage;
    attempt(() => lost.add(1, attributes(m, { [ATTRIBUTES.reason]: m.reason })));
    heldCount.countOut(m.acquire);
    const heldMs = m.heldMs;
    if (heldMs !== undefined) attempt(() => holdDuration.record(heldMs / 1_000, attributes(m, { [ATTRIBUTES.outcome]: 'lost' })));
  };

  const onInbox = (message: unknown) => {
    const m = message as InboxMessage;
    const outcome = { [ATTRIBUTES.outcome]: m.outcome, ...(m.reason !== undefined && { [ATTRIBUTES.reason]: m.reason }) };
    attempt(() => inboxMessages.add(m.count, attributes(m, outcome)));
    const { queueWaitMs, durationMs } = m;
    if (queueWaitMs !== undefined) attempt(() => queueWait.record(queueWaitMs / 1_000, attributes(m)));
    if (durationMs !== undefined) attempt(() => handlerDuration.record(durationMs / 1_000, attributes(m)));
  };

  const subscriptions: [string, Phases<never>][] = [
    [CHANNELS.acquire, guardPhases(acquire, attempt)],
    [CHANNELS.release, guardPhases(release, attempt)],
    [CHANNELS.extend, guardPhases(extend, attempt)],
    [CHANNELS.renewal, guardPhases(renewal, attempt)],
    [CHANNELS.sync, guardPhases(sync, attempt)],
  ];
  const lostHandler = (message: unknown) => void attempt(() => onLost(message));
  const inboxHandler = (message: unknown) => void attempt(() => onInbox(message));
  let enabled = false;
  const instrumentation: HoldfastInstrumentation = {
    enable() {
      if (enabled) return;
      enabled = true;
      for (const [name, handlers] of subscriptions) tracingChannel(name).subscribe(handlers as never);
      channel(CHANNELS.lost).subscribe(lostHandler);
      channel(CHANNELS.inbox).subscribe(inboxHandler);
    },
    disable() {
      if (!enabled) return;
      enabled = false;
      for (const [name, handlers] of subscriptions) tracingChannel(name).unsubscribe(handlers as never);
      channel(CHANNELS.lost).unsubscribe(lostHandler);
      channel(CHANNELS.inbox).unsubscribe(inboxHandler);
      heldCount.clear();
    },
  };
  instrumentation.enable();
  return instrumentation;
}

/**
 * Each handler of `phases`, run through `attempt`: whatever the handlers do
 * besides the instrument calls (already attempted one by one, so one failure
 * never skips the others' bookkeeping) cannot throw into holdfast either.
 */
function guardPhases<T>(phases: Phases<T>, attempt: Attempt): Phases<never> {
  const guarded: Phases<T> = {};
  for (const phase of Object.keys(phases) as (keyof Phases<T>)[]) {
    const handler = phases[phase]!;
    guarded[phase] = (m) => void attempt(() => handler(m));
  }
  return guarded as Phases<never>;
}
