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
import { CHANNELS, codeOf, type AcquireMessage, type ExtendMessage, type LockMessage, type LostMessage, type ReleaseMessage, type RenewalMessage } from './messages.js';

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
}

/** A running instrumentation; `disable()` unsubscribes it. */
export interface HoldfastInstrumentation {
  /** Stops recording: every channel subscription is removed. */
  disable(): void;
}

/** The instrumentation scope's name. */
export const INSTRUMENTATION_NAME = '@holdfast/otel';

/** Attribute names. */
export const ATTRIBUTES = {
  /** `lock`, `read`, `write` or `semaphore`. */
  kind: 'holdfast.lock.kind',
  /** How an operation ended (`acquired`, `busy`, `timeout`, `released`, `lost`, `ok`, …). */
  outcome: 'holdfast.lock.outcome',
  /** Why a lease was lost (`expired`, `taken`, `deleted`, `unreachable`, `closed`). */
  reason: 'holdfast.lock.reason',
  /** The lock name (only with `lockNameAttribute`). */
  name: 'holdfast.lock.name',
  /** `wait` or `try` (spans). */
  mode: 'holdfast.lock.mode',
  /** The fencing token (spans). */
  token: 'holdfast.lock.token',
} as const;

type Phases<T> = { start?: (m: T) => void; end?: (m: T) => void; asyncStart?: (m: T) => void; asyncEnd?: (m: T) => void; error?: (m: T) => void };

/** What an acquisition ended as. */
function acquireOutcome(message: AcquireMessage): string {
  if (message.error === undefined) return message.result ? 'acquired' : 'busy';
  const code = codeOf(message.error);
  if (code === 'ERR_LOCK_TIMEOUT') return 'timeout';
  if ((message.error as { name?: unknown } | null)?.name === 'AbortError') return 'aborted';
  return 'error';
}

/**
 * Turns holdfast's diagnostics_channel messages into OpenTelemetry metrics
 * and spans: every LockClient of the process is observed, from the moment
 * this is called until `disable()`.
 */
export function instrumentHoldfast(options: HoldfastInstrumentationOptions = {}): HoldfastInstrumentation {
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_NAME);
  const tracer = options.spans === false ? undefined : (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_NAME);
  const withName = options.lockNameAttribute === true;

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

  const attributes = (message: LockMessage, extra: Attributes = {}): Attributes => ({
    [ATTRIBUTES.kind]: message.kind,
    ...(withName && { [ATTRIBUTES.name]: message.name }),
    ...extra,
  });

  // The acquisitions whose hold `held` counted, by their context object: a
  // release or loss counts a hold out only when its acquisition is here, so
  // holds taken before this instrumentation started never push it below zero.
  const counted = new WeakSet<object>();
  const countOut = (m: ReleaseMessage | LostMessage) => {
    if (m.acquire !== undefined && counted.delete(m.acquire)) held.add(-1, attributes(m));
  };

  // The span and start time of each operation in flight, by its context object.
  const started = new WeakMap<object, { at: number; span: Span | undefined }>();
  const begin = (message: object, spanName: string, spanAttributes: Attributes) => {
    // Started in the caller's context: its active span is the parent.
    const span = tracer?.startSpan(spanName, { kind: SpanKind.INTERNAL, attributes: spanAttributes }, context.active());
    started.set(message, { at: performance.now(), span });
  };
  const finish = (message: { error?: unknown }, extra: Attributes = {}): number => {
    const entry = started.get(message);
    started.delete(message);
    const seconds = entry ? (performance.now() - entry.at) / 1_000 : 0;
    const span = entry?.span;
    if (span) {
      span.setAttributes(extra);
      if (message.error !== undefined) {
        span.recordException(message.error instanceof Error ? message.error : String(message.error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: message.error instanceof Error ? message.error.message : String(message.error) });
      }
      span.end();
    }
    return seconds;
  };

  const acquire: Phases<AcquireMessage> = {
    start: (m) => begin(m, 'holdfast.acquire', attributes(m, { [ATTRIBUTES.mode]: m.mode })),
    asyncEnd: (m) => {
      const outcome = acquireOutcome(m);
      const seconds = finish(m, { [ATTRIBUTES.outcome]: outcome, ...(m.result && { [ATTRIBUTES.token]: m.result.token }) });
      waitDuration.record(seconds, attributes(m, { [ATTRIBUTES.outcome]: outcome }));
      if (!m.result) return;
      acquired.add(1, attributes(m));
      // A re-entry adds a hold count to a hold already counted.
      if ((m.result.holdCount ?? 1) === 1) {
        counted.add(m);
        held.add(1, attributes(m));
      }
    },
  };
  const release: Phases<ReleaseMessage> = {
    start: (m) => begin(m, 'holdfast.release', attributes(m, { [ATTRIBUTES.token]: m.token })),
    asyncEnd: (m) => {
      const code = codeOf(m.error);
      finish(m, { [ATTRIBUTES.outcome]: m.error === undefined ? 'released' : 'error' });
      // A hold found lost or ended here was counted out by its loss already.
      if (!m.final || code === 'ERR_LOCK_LOST' || code === 'ERR_LOCK_NOT_HELD') return;
      countOut(m);
      if (m.heldMs !== undefined) holdDuration.record(m.heldMs / 1_000, attributes(m, { [ATTRIBUTES.outcome]: 'released' }));
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
      renewalDuration.record(seconds, { [ATTRIBUTES.outcome]: outcome });
    },
  };
  const onLost = (message: unknown) => {
    const m = message as LostMessage;
    lost.add(1, attributes(m, { [ATTRIBUTES.reason]: m.reason }));
    countOut(m);
    if (m.heldMs !== undefined) holdDuration.record(m.heldMs / 1_000, attributes(m, { [ATTRIBUTES.outcome]: 'lost' }));
  };

  const subscriptions: [string, Phases<never>][] = [
    [CHANNELS.acquire, acquire as Phases<never>],
    [CHANNELS.release, release as Phases<never>],
    [CHANNELS.extend, extend as Phases<never>],
    [CHANNELS.renewal, renewal as Phases<never>],
  ];
  for (const [name, handlers] of subscriptions) tracingChannel(name).subscribe(handlers as never);
  channel(CHANNELS.lost).subscribe(onLost);
  let enabled = true;
  return {
    disable() {
      if (!enabled) return;
      enabled = false;
      for (const [name, handlers] of subscriptions) tracingChannel(name).unsubscribe(handlers as never);
      channel(CHANNELS.lost).unsubscribe(onLost);
    },
  };
}
