/**
 * `@holdfast/otel`: OpenTelemetry metrics and spans for holdfast, from the
 * operations @holdfast/core publishes on `node:diagnostics_channel`.
 *
 * @packageDocumentation
 */
export { instrumentHoldfast, INSTRUMENTATION_NAME, ATTRIBUTES } from './instrumentation.js';
export type { HoldfastInstrumentation, HoldfastInstrumentationOptions } from './instrumentation.js';
