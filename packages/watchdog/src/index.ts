export { Watchdog } from './watchdog.js';
export type { WatchdogOptions, ResolvedWatchdogOptions } from './options.js';
export type { WatchdogEvents, RenewedEvent, RenewalFailedEvent, LeaseLostEvent } from './events.js';
