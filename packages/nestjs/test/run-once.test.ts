import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ClientClosedError, InvalidArgumentError, type RunOnceClaim } from '@holdfast/core';
import { activeHandleCount, activeResources, sharedRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { Injectable } from '@nestjs/common';
import { Cron, Interval, ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HoldfastModule, LockLease, RunOnce } from '../src/index.js';

/**
 * `@RunOnce` in applications built with Test.createTestingModule, against a real Redis: once per
 * firing across applications sharing a prefix, the key and its ttl, decorator order, misuse, and
 * shutdown with @nestjs/schedule firing. (Three real processes: run-once-processes.test.ts.)
 */
let server: RedisServer;
let admin: Redis;
const open: TestingModule[] = [];

beforeAll(async () => {
  server = await sharedRedis();
  admin = new Redis(server.url);
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
});
afterAll(() => {
  admin.disconnect();
});

/** What a run saw of its claim. */
interface Ran {
  readonly key: string;
  readonly token: number;
}

@Injectable()
class Reports {
  runs = 0;

  /** Once a year (New Year, UTC): every call of a test falls in the same firing. */
  @Cron('0 0 1 1 *', { timeZone: 'UTC' })
  @RunOnce()
  async yearly(@LockLease() claim?: RunOnceClaim): Promise<Ran> {
    this.runs++;
    return { key: claim!.key, token: claim!.token };
  }

  /** @RunOnce above @Cron, with a key of its own. */
  @RunOnce('annual-report', { ttlMs: 45_000 })
  @Cron('0 0 1 1 *', { timeZone: 'UTC' })
  async annual(): Promise<string> {
    return 'done';
  }

  @Cron('0 * * * *', { timeZone: 'UTC' })
  @RunOnce()
  async hourly(): Promise<string> {
    return 'hour';
  }
}

async function boot(prefix: string, providers: unknown[] = [Reports], imports: unknown[] = []): Promise<TestingModule> {
  const app = await Test.createTestingModule({
    imports: [HoldfastModule.forRoot({ client: () => new Redis(server.url), prefix }), ...(imports as [])],
    providers: providers as [],
  }).compile();
  open.push(app);
  await app.init();
  return app;
}

/** The run-once keys under `prefix`, as `<prefix>:{<tag>}:once:<key>` → `<key>`. */
async function onceKeys(prefix: string): Promise<Map<string, string>> {
  const keys = await admin.keys(`${prefix}:*:once:*`);
  return new Map(keys.map((key) => [key.slice(key.indexOf(':once:') + ':once:'.length), key]));
}

/** The start of the UTC hour `ms` falls in, as ISO 8601. */
const hourOf = (ms: number) => new Date(Math.floor(ms / 3_600_000) * 3_600_000).toISOString();

describe('@RunOnce', () => {
  it('runs a firing in one application only, under the key Class.method:<tick>; a later call in the interval skips', async () => {
    const prefix = uniqueName('nest-once');
    const a = (await boot(prefix)).get(Reports);
    const b = (await boot(prefix)).get(Reports);
    const year = `${new Date().getUTCFullYear()}-01-01T00:00:00.000Z`;

    const ran = await a.yearly();
    expect(ran.key).toBe(`Reports.yearly:${year}`);
    expect(ran.token).toBeGreaterThan(0);
    // The other application fires the same tick: it skips. So does the first one firing again.
    expect(await b.yearly()).toBeUndefined();
    expect(await a.yearly()).toBeUndefined();
    expect(a.runs + b.runs).toBe(1);

    // A key of its own (with @RunOnce above @Cron), and its ttlMs.
    expect(await b.annual()).toBe('done');
    expect(await a.annual()).toBeUndefined();
    const keys = await onceKeys(prefix);
    expect([...keys.keys()].sort()).toEqual([`Reports.yearly:${year}`, `annual-report:${year}`].sort());
    const annualTtl = await admin.pttl(keys.get(`annual-report:${year}`)!);
    expect(annualTtl).toBeGreaterThan(30_000);
    expect(annualTtl).toBeLessThanOrEqual(45_000);
    // A yearly interval is more than core takes: the longest ttl instead (~24.8 days).
    expect(await admin.pttl(keys.get(`Reports.yearly:${year}`)!)).toBeGreaterThan(2_147_483_647 - 60_000);
  });

  it('keeps a firing claimed for the interval by default: until the next tick at least', async () => {
    const prefix = uniqueName('nest-once');
    const reports = (await boot(prefix)).get(Reports);
    const before = Date.now();
    expect(await reports.hourly()).toBe('hour');
    const after = Date.now();
    const [[key, redisKey]] = [...(await onceKeys(prefix)).entries()] as [[string, string]];
    // The call fell in one hour, or (at a change of hour) in the next.
    expect([`Reports.hourly:${hourOf(before)}`, `Reports.hourly:${hourOf(after)}`]).toContain(key);
    const ttl = await admin.pttl(redisKey);
    expect(ttl).toBeGreaterThan(3_600_000 - 30_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });

  it('fires with @nestjs/schedule; on shutdown the scheduler and the client stop, no handle is left, later calls reject', async () => {
    const baseline = activeHandleCount();
    const keys: string[] = [];
    @Injectable()
    class Ticker {
      @Cron('* * * * * *')
      @RunOnce()
      async tick(@LockLease() claim?: RunOnceClaim): Promise<void> {
        keys.push(claim!.key);
      }
    }
    const app = await boot(uniqueName('nest-once'), [Ticker], [ScheduleModule.forRoot()]);
    await waitFor(() => keys.length >= 2, { timeoutMs: 10_000 });
    expect(keys[0]).toMatch(/^Ticker\.tick:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    expect(new Set(keys).size).toBe(keys.length);
    const ticker = app.get(Ticker);
    await app.close();
    open.length = 0;
    await expect(ticker.tick()).rejects.toBeInstanceOf(ClientClosedError);
    await waitFor(() => activeHandleCount() <= baseline, {
      timeoutMs: 3_000,
      message: () => `still active: ${activeResources().join(', ')} (baseline ${baseline})`,
    });
  });
});

describe('@RunOnce misuse', () => {
  it('throws InvalidArgumentError for a bad key or options when the class is defined', () => {
    expect(() => RunOnce('')).toThrow('Expected `name` to be a non-empty string, got `""`');
    expect(() => RunOnce('x'.repeat(1000))).toThrow('Expected `key` to be at most 999 bytes (the firing\'s time is added to it), got 1000 bytes');
    expect(() => RunOnce(42 as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => RunOnce(undefined, { ttlMs: 0 })).toThrow('Expected `ttlMs` to be a positive integer, got `0`');
    expect(() => {
      class Static {
        @RunOnce()
        static async run() {}
      }
      return Static;
    }).toThrow('Expected `Static.run` to be an instance method for `@RunOnce`, got a static method');
  });

  it('rejects with InvalidArgumentError on a method without @Cron or with another schedule', async () => {
    @Injectable()
    class Misplaced {
      @RunOnce()
      async plain() {}

      @Interval(60_000)
      @RunOnce()
      async every() {}

      @Cron('not a schedule')
      @RunOnce()
      async broken() {}
    }
    const misplaced = (await boot(uniqueName('nest-once'), [Misplaced])).get(Misplaced);
    await expect(misplaced.plain()).rejects.toThrow(
      'Expected `Misplaced.plain` to be a `@Cron` method of @nestjs/schedule for `@RunOnce`, got a method without `@Cron`',
    );
    await expect(misplaced.every()).rejects.toThrow('got a `@Interval` method');
    await expect(misplaced.broken()).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(misplaced.broken()).rejects.toThrow('Expected the `@Cron` schedule of `Misplaced.broken` to be one cron accepts');
  });

  it('rejects with InvalidArgumentError naming the `cron` package when it is not installed', async () => {
    // A process of its own (test/no-cron.mjs, on the built package), where `cron` cannot be resolved.
    const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, 'no-cron.mjs'), server.url], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({
      name: 'InvalidArgumentError',
      code: 'ERR_INVALID_ARGUMENT',
      message: "Expected the `cron` package (version 3 or 4, as @nestjs/schedule uses) to be installed for `@RunOnce`, got `Cannot find module 'cron'`",
    });
  });
});
