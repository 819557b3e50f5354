import { InvalidArgumentError } from '@holdfast/core';
import { CronTime } from 'cron';
import { describe, expect, it } from 'vitest';
import { cronSchedule, cronSlot, type CronMetadata, type CronTimeConstructor } from '../src/cron-slot.js';

/** The firing slot of `@RunOnce`: the cron tick at or before a call, computed with the `cron` package. */
const at = (iso: string) => Date.parse(iso);

function slot(metadata: CronMetadata, nowIso: string): { at: string; next: string | undefined } {
  const schedule = cronSchedule(CronTime as unknown as CronTimeConstructor, metadata, 'Jobs.run');
  const found = cronSlot(schedule, at(nowIso));
  return { at: found.at.toISOString(), next: found.next?.toISOString() };
}

describe('cronSlot', () => {
  it('is the tick of the call itself when called on a tick, and that tick until the next one (a late firing)', () => {
    const hourly = { cronTime: '0 * * * *', timeZone: 'UTC' };
    const slot10 = { at: '2026-03-04T10:00:00.000Z', next: '2026-03-04T11:00:00.000Z' };
    expect(slot(hourly, '2026-03-04T10:00:00.000Z')).toEqual(slot10);
    expect(slot(hourly, '2026-03-04T10:00:00.004Z')).toEqual(slot10);
    expect(slot(hourly, '2026-03-04T10:37:12.500Z')).toEqual(slot10);
    expect(slot(hourly, '2026-03-04T10:59:59.999Z')).toEqual(slot10);
    expect(slot(hourly, '2026-03-04T11:00:00.000Z')).toEqual({ at: '2026-03-04T11:00:00.000Z', next: '2026-03-04T12:00:00.000Z' });
  });

  it('handles every-second schedules to the millisecond', () => {
    const everySecond = { cronTime: '* * * * * *' };
    expect(slot(everySecond, '2026-03-04T10:00:05.000Z')).toEqual({ at: '2026-03-04T10:00:05.000Z', next: '2026-03-04T10:00:06.000Z' });
    expect(slot(everySecond, '2026-03-04T10:00:05.999Z')).toEqual({ at: '2026-03-04T10:00:05.000Z', next: '2026-03-04T10:00:06.000Z' });
    const everyFifteen = { cronTime: '*/15 * * * * *' };
    expect(slot(everyFifteen, '2026-03-04T10:00:44.321Z')).toEqual({ at: '2026-03-04T10:00:30.000Z', next: '2026-03-04T10:00:45.000Z' });
  });

  it('finds ticks far back and irregular intervals (weekdays at 9 and 17: Friday 17:00 → Monday 9:00)', () => {
    const weekdays = { cronTime: '0 0 9,17 * * 1-5', timeZone: 'UTC' };
    // Sunday: the slot is Friday 17:00, and the next tick Monday 9:00.
    expect(slot(weekdays, '2026-03-08T12:00:00.000Z')).toEqual({ at: '2026-03-06T17:00:00.000Z', next: '2026-03-09T09:00:00.000Z' });
    expect(slot(weekdays, '2026-03-09T09:00:00.000Z')).toEqual({ at: '2026-03-09T09:00:00.000Z', next: '2026-03-09T17:00:00.000Z' });
    const yearly = { cronTime: '0 0 1 1 *', timeZone: 'UTC' };
    expect(slot(yearly, '2026-12-31T23:59:59.999Z')).toEqual({ at: '2026-01-01T00:00:00.000Z', next: '2027-01-01T00:00:00.000Z' });
  });

  it('computes ticks in the schedule’s timeZone or utcOffset, as cron schedules them', () => {
    // 9:00 in Paris is 8:00 UTC in winter, 7:00 UTC in summer.
    const paris = { cronTime: '0 9 * * *', timeZone: 'Europe/Paris' };
    expect(slot(paris, '2026-01-15T07:59:59.000Z')).toEqual({ at: '2026-01-14T08:00:00.000Z', next: '2026-01-15T08:00:00.000Z' });
    expect(slot(paris, '2026-07-15T07:00:00.000Z')).toEqual({ at: '2026-07-15T07:00:00.000Z', next: '2026-07-16T07:00:00.000Z' });
    // The spring-forward day in Paris lasts 23 hours.
    expect(slot(paris, '2026-03-29T10:00:00.000Z')).toEqual({ at: '2026-03-29T07:00:00.000Z', next: '2026-03-30T07:00:00.000Z' });
    expect(slot(paris, '2026-03-28T10:00:00.000Z')).toEqual({ at: '2026-03-28T08:00:00.000Z', next: '2026-03-29T07:00:00.000Z' });
    // utcOffset in minutes east of UTC: +5:30.
    const offset = { cronTime: '0 9 * * *', utcOffset: 330 };
    expect(slot(offset, '2026-01-15T03:29:59.000Z')).toEqual({ at: '2026-01-14T03:30:00.000Z', next: '2026-01-15T03:30:00.000Z' });
    // A half-hour zone moves an hourly schedule to the half hour.
    const kolkata = { cronTime: '0 * * * *', timeZone: 'Asia/Kolkata' };
    expect(slot(kolkata, '2026-01-15T05:10:00.000Z')).toEqual({ at: '2026-01-15T04:30:00.000Z', next: '2026-01-15T05:30:00.000Z' });
  });

  it('finds the same slot from the previous firing as from scratch: the same firing, the next, several later, an earlier time', () => {
    const schedule = cronSchedule(CronTime as unknown as CronTimeConstructor, { cronTime: '0 */10 * * * *', timeZone: 'UTC' }, 'Jobs.run');
    const previous = cronSlot(schedule, at('2026-03-04T10:20:00.003Z'));
    for (const now of ['2026-03-04T10:29:59.999Z', '2026-03-04T10:30:00.001Z', '2026-03-04T10:55:00.000Z', '2026-03-04T12:05:00.000Z', '2026-03-04T10:19:00.000Z']) {
      expect(cronSlot(schedule, at(now), previous), now).toEqual(cronSlot(schedule, at(now)));
    }
  });

  it('is the date itself for a one-date schedule, with no next tick', () => {
    expect(slot({ cronTime: new Date('2030-05-01T12:00:00.000Z') }, '2030-05-01T12:00:00.002Z')).toEqual({
      at: '2030-05-01T12:00:00.000Z',
      next: undefined,
    });
  });

  it('rejects what cron rejects with InvalidArgumentError', () => {
    const schedule = (metadata: CronMetadata) => cronSchedule(CronTime as unknown as CronTimeConstructor, metadata, 'Jobs.run');
    expect(() => schedule({ cronTime: 'every hour' })).toThrow(InvalidArgumentError);
    expect(() => schedule({ cronTime: 'every hour' })).toThrow('Expected the `@Cron` schedule of `Jobs.run` to be one cron accepts for `@RunOnce`, got `every hour`');
    expect(() => schedule({ cronTime: '0 * * * *', timeZone: 'Mars/Olympus' })).toThrow(InvalidArgumentError);
  });
});
