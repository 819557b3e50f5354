import { diag } from '@opentelemetry/api';

/**
 * Runs `record` (an instrument's `add()` / `record()`, a span operation) and
 * returns whether it completed. A failure is passed to `report` instead of
 * thrown: these run inside diagnostics_channel subscribers, called from
 * holdfast's lock calls, and Node rethrows a subscriber's exception as an
 * uncaught exception on the next tick, which would end the process.
 */
export type Attempt = (record: () => void) => boolean;

/**
 * The `Attempt` of one instrumentation: failures go to `onError`, or to
 * OpenTelemetry's `diag` logger without one. A throwing `onError` is logged
 * on `diag` too, and a throwing logger is ignored: nothing gets out.
 */
export function containing(scope: string, onError: ((error: unknown) => void) | undefined): Attempt {
  const log = (error: unknown) => {
    try {
      diag.error(`${scope}: recording a holdfast operation failed (the lock call is unaffected)`, error);
    } catch {
      // The logger itself failed: there is nowhere left to report to.
    }
  };
  const report = (error: unknown) => {
    if (onError === undefined) return log(error);
    try {
      onError(error);
    } catch (handlerError) {
      log(handlerError);
    }
  };
  return (record) => {
    try {
      record();
      return true;
    } catch (error) {
      report(error);
      return false;
    }
  };
}
