import { createRequire } from 'node:module';
import { InvalidArgumentError } from '@holdfast/core';
import type { CronMetadata, CronTimeConstructor } from './cron-slot.js';

/** `@nestjs/schedule`'s metadata keys: plain strings, stable since its first release. */
const SCHEDULER_TYPE = 'SCHEDULER_TYPE';
const SCHEDULE_CRON_OPTIONS = 'SCHEDULE_CRON_OPTIONS';
/** `@nestjs/schedule`'s `SchedulerType` values, for the message of a method scheduled otherwise. */
const SCHEDULER_TYPES: Record<number, string> = { 1: '@Cron', 2: '@Timeout', 3: '@Interval' };

/** `Reflect` with reflect-metadata's API, which Nest loads before any decorator runs. */
interface MetadataReflect {
  getMetadata?(key: unknown, target: object): unknown;
}

let loaded: CronTimeConstructor | undefined;

/**
 * The `cron` package's `CronTime`, loaded at the first `@RunOnce` call: `cron`
 * is an optional peer dependency (the one `@nestjs/schedule` schedules with),
 * so an application without `@RunOnce` never needs it. Loaded with `require`
 * from this package's own location (cron is CommonJS): a dynamic `import()`
 * fails where modules run in a VM without ESM support, as under Jest, where
 * Nest applications are most often tested.
 */
export function loadCronTime(): CronTimeConstructor {
  if (loaded) return loaded;
  let module: Record<string, unknown>;
  try {
    module = createRequire(import.meta.url)('cron') as Record<string, unknown>;
  } catch (error) {
    throw new InvalidArgumentError(
      `Expected the \`cron\` package (version 3 or 4, as @nestjs/schedule uses) to be installed for \`@RunOnce\`, got \`${(error as Error)?.message?.split('\n')[0] ?? String(error)}\``,
    );
  }
  const CronTime = module.CronTime as CronTimeConstructor | undefined;
  if (typeof CronTime !== 'function') throw new InvalidArgumentError('Expected the `cron` package to export `CronTime` for `@RunOnce`, got none');
  return (loaded = CronTime);
}

/**
 * The `@Cron` metadata of a method, looked for on each function given (the
 * wrapper `@RunOnce` made, which `@Cron` applied later decorates, and the
 * method the instance has now, for decorators applied in between).
 * `InvalidArgumentError` when none has `@Cron`.
 */
export function cronMetadata(functions: readonly unknown[], label: string): CronMetadata {
  const reflect = Reflect as unknown as MetadataReflect;
  let other: unknown;
  for (const fn of functions) {
    if (typeof fn !== 'function' || !reflect.getMetadata) continue;
    const metadata = reflect.getMetadata(SCHEDULE_CRON_OPTIONS, fn) as CronMetadata | undefined;
    if (metadata !== undefined && metadata !== null && typeof metadata === 'object') return metadata;
    other ??= reflect.getMetadata(SCHEDULER_TYPE, fn);
  }
  const found = other === undefined ? 'a method without `@Cron`' : `a \`${SCHEDULER_TYPES[other as number] ?? String(other)}\` method`;
  throw new InvalidArgumentError(`Expected \`${label}\` to be a \`@Cron\` method of @nestjs/schedule for \`@RunOnce\`, got ${found}`);
}
