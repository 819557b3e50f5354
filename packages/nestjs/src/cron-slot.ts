import { InvalidArgumentError } from '@holdfast/core';

/**
 * What `@RunOnce` needs of the `cron` package's `CronTime` (cron 3 and 4):
 * the next tick strictly after a time, in a zone. Declared here so that the
 * package's types never name `cron`, an optional peer dependency.
 */
export interface CronTimeLike {
  /** True when the source is one date, not a recurring expression. */
  readonly realDate: boolean;
  /** The expression, or the date (a Luxon `DateTime`) when `realDate`. */
  readonly source: unknown;
  /** The first tick after the whole second `start` falls in, as a Luxon `DateTime`. */
  getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number };
}

/** `new CronTime(source, timeZone, utcOffset)`, as the `cron` package exports it. */
export type CronTimeConstructor = new (source: unknown, timeZone?: string | null, utcOffset?: number | null) => CronTimeLike;

/** The schedule of one `@Cron` method: its ticks, in its zone. */
export interface CronSchedule {
  readonly time: CronTimeLike;
  /** The zone ticks are computed in (`timeZone`, or `utcOffset` as a `UTC±hh:mm` zone), as cron's own scheduling does. */
  readonly zone: string | undefined;
}

/** One firing of a `@Cron` method: the tick it belongs to, and the tick after it (none for a one-date schedule). */
export interface CronSlot {
  /** The tick at or before the call: the firing's scheduled time. */
  readonly at: Date;
  /** The next tick after `at`, if the schedule recurs. */
  readonly next: Date | undefined;
}

/** What `@Cron(cronTime, options)` records on the method (`@nestjs/schedule`'s `SCHEDULE_CRON_OPTIONS`). */
export interface CronMetadata {
  readonly cronTime: unknown;
  readonly timeZone?: string;
  readonly utcOffset?: number | string;
}

/** The ticks of a schedule are whole seconds: nothing finer is ever searched. */
const SECOND_MS = 1000;
/** Ticks walked forward from the previous firing before searching from `now` instead. */
const FORWARD_STEPS = 4;
/** Farther back than cron itself searches forward (8 years): a schedule with no tick within it has none. */
const MAX_LOOKBACK_S = 9 * 366 * 24 * 3600;

/** `UTC+hh:mm` for cron's `utcOffset` (minutes east of UTC), the zone name cron uses for it. */
function offsetZone(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `UTC${sign}${String(Math.trunc(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * The schedule of a `@Cron` method from its metadata, built with the same
 * `CronTime` class that schedules it. `InvalidArgumentError` for what cron
 * rejects too (a bad expression, zone or offset).
 */
export function cronSchedule(CronTime: CronTimeConstructor, metadata: CronMetadata, label: string): CronSchedule {
  const { cronTime, timeZone } = metadata;
  const utcOffset = metadata.utcOffset === undefined || metadata.utcOffset === null ? undefined : Number(metadata.utcOffset);
  try {
    const time = timeZone != null ? new CronTime(cronTime, timeZone) : new CronTime(cronTime, null, utcOffset ?? null);
    const zone = timeZone ?? (utcOffset === undefined ? undefined : offsetZone(utcOffset));
    // A zone cron cannot use fails here, at the first call, not at every firing.
    if (!time.realDate) time.getNextDateFrom(new Date(0), zone);
    return { time, zone };
  } catch (error) {
    throw new InvalidArgumentError(
      `Expected the \`@Cron\` schedule of \`${label}\` to be one cron accepts for \`@RunOnce\`, got \`${String(cronTime)}\`: ${(error as Error)?.message ?? String(error)}`,
    );
  }
}

/**
 * The firing a call at `now` belongs to: the schedule's latest tick at or
 * before `now`, and the tick after it. An instance firing late (a busy event
 * loop, a pause) computes the same tick as the others, until the next tick.
 *
 * Given the previous firing's slot, the new one is found by walking forward
 * from it (the next firing is usually its next tick). Otherwise, since
 * cron answers only "the next tick after t", the latest tick at or before
 * `now` is found as the next tick after `now - k` seconds for the smallest
 * such `k`: doubling `k` until a tick falls within, then halving the range
 * (about 2·log2 of the interval calls, whatever the schedule).
 */
export function cronSlot(schedule: CronSchedule, now: number, previous?: CronSlot): CronSlot {
  const { time, zone } = schedule;
  if (time.realDate) {
    const source = time.source as { toMillis?: () => number } | Date;
    const at = new Date(source instanceof Date ? source.getTime() : source.toMillis!());
    return { at, next: undefined };
  }
  if (previous?.next !== undefined && previous.at.getTime() <= now) {
    // The usual call: the firing after the previous one (or the same one), found in a step or two.
    let slot = previous as CronSlot & { next: Date };
    for (let step = 0; step < FORWARD_STEPS; step++) {
      if (now < slot.next.getTime()) return slot;
      slot = { at: slot.next, next: new Date(time.getNextDateFrom(slot.next, zone).toMillis()) };
    }
  }
  const second = Math.floor(now / SECOND_MS) * SECOND_MS;
  // next(k): the first tick after `second - k` seconds; ticks at or before `now` are those at or before `second`.
  const nextAfter = (k: number) => time.getNextDateFrom(new Date(second - k * SECOND_MS), zone).toMillis();
  let high = 1;
  while (nextAfter(high) > second) {
    if (high >= MAX_LOOKBACK_S) throw new InvalidArgumentError(`Expected a schedule with a tick before now, got none in ${MAX_LOOKBACK_S} s`);
    high = Math.min(high * 2, MAX_LOOKBACK_S);
  }
  // The smallest k in (high / 2, high] whose next tick is at or before `second`: that tick is the latest one.
  let low = Math.floor(high / 2);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (nextAfter(middle) <= second) high = middle;
    else low = middle;
  }
  const at = nextAfter(high);
  return { at: new Date(at), next: new Date(time.getNextDateFrom(new Date(at), zone).toMillis()) };
}
