import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import type { ConsumerContext } from './node-redis-consumers.js';

/**
 * @holdfast/nestjs as a Nest user gets it: packed with core and the watchdog, installed into an
 * empty folder with Nest 11 (and again with Nest 10) and ioredis, and an application written in
 * TypeScript with `experimentalDecorators` and `emitDecoratorMetadata` (providers injected by
 * type, no `@Inject`), compiled by `tsc` (strict, declarations of every package checked) to
 * CommonJS and to ESM, then run against a real Redis: a `@WithLock` method re-entering another
 * of the same name, the lease through `@LockLease()`, a typed `LockTimeoutError`, the module's
 * `LockClient` and `Watchdog` injected by type, a `@Cron` method of @nestjs/schedule under
 * `@RunOnce` (its `cron` coming with @nestjs/schedule, as npm installs it) running once for its
 * firing (under Jest too), and the process ending by itself after `app.close()`. Registered by
 * consumer.test.ts.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const APP = `import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Injectable, Module } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockClient, LockTimeoutError, type Lease, type RunOnceClaim } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { HoldfastModule, LockLease, RunOnce, WithLock } from '@holdfast/nestjs';

/** A key of each run's own: the Redis is shared by every run of this application. */
const report = \`report-\${randomUUID()}\`;

@Injectable()
class Billing {
  constructor(readonly locks: LockClient, readonly dog: Watchdog) {}

  @WithLock((id: string) => \`invoice:\${id}\`, { waitMs: 200 })
  async pay(id: string, @LockLease() lease?: Lease): Promise<number[]> {
    return [lease!.holdCount, await this.again(id)];
  }

  @WithLock((id: string) => \`invoice:\${id}\`)
  async again(id: string, @LockLease() lease?: Lease): Promise<number> {
    return lease!.holdCount;
  }

  @Cron('0 0 1 1 *', { timeZone: 'UTC' })
  @RunOnce(report)
  async yearly(@LockLease() claim?: RunOnceClaim): Promise<string> {
    return claim!.key;
  }
}

@Module({
  imports: [HoldfastModule.forRoot({ client: () => new Redis(process.env.REDIS_URL!), prefix: 'consumer-nest', watchdog: true })],
  providers: [Billing],
})
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const billing = app.get(Billing);
  const holdCounts = await billing.pay('1');
  const held = await billing.locks.lock('invoice:2').acquire();
  const timeout = await billing.pay('2').catch((error: unknown) => error instanceof LockTimeoutError);
  await held.release();
  const injected = billing.locks === app.get(LockClient) && billing.dog instanceof Watchdog;
  // The same firing twice: it runs the first time only.
  const once = [await billing.yearly(), await billing.yearly()];
  const firing = \`\${report}:\${new Date().getUTCFullYear()}-01-01T00:00:00.000Z\`;
  await app.close();
  console.log(JSON.stringify({ holdCounts, timeout, injected, once: once[0] === firing && once[1] === undefined }));
}
void main();
`;

const EXPECTED = { holdCounts: [1, 2], timeout: true, injected: true, once: true };

/** `@RunOnce` under Jest (CommonJS in a VM without ESM support), where Nest applications are most often tested. */
const JEST_TEST = `require('reflect-metadata');
const { randomUUID } = require('node:crypto');
const { Injectable, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { Cron } = require('@nestjs/schedule');
const { HoldfastModule, RunOnce } = require('@holdfast/nestjs');
const { Redis } = require('ioredis');

class Jobs {
  async yearly() {
    return 'ran';
  }
}
// As TypeScript applies \`@Cron(…) @RunOnce(key) yearly()\`: the lower decorator first.
let descriptor = Object.getOwnPropertyDescriptor(Jobs.prototype, 'yearly');
for (const decorator of [RunOnce(\`jest-\${randomUUID()}\`), Cron('0 0 1 1 *', { timeZone: 'UTC' })]) {
  descriptor = decorator(Jobs.prototype, 'yearly', descriptor) ?? descriptor;
}
Object.defineProperty(Jobs.prototype, 'yearly', descriptor);
Injectable()(Jobs);
class AppModule {}
Module({ imports: [HoldfastModule.forRoot({ client: () => new Redis(process.env.REDIS_URL), prefix: 'consumer-nest-jest' })], providers: [Jobs] })(AppModule);

test('@RunOnce runs a firing once', async () => {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const jobs = app.get(Jobs);
  expect([await jobs.yearly(), await jobs.yearly()]).toEqual(['ran', undefined]);
  await app.close();
}, 60000); // Jest's 5 s default is a speed limit on a busy machine
`;

export function nestConsumerTests(ctx: ConsumerContext): void {
  for (const nest of ['11', '10']) {
    it(`@holdfast/nestjs with Nest ${nest}: TypeScript with decorator metadata, compiled to CommonJS and ESM`, async () => {
      const app = join(ctx.work(), `nest-${nest}-app`);
      await mkdir(join(app, 'src'), { recursive: true });
      await writeFile(join(app, 'package.json'), JSON.stringify({ name: `nest-${nest}-app`, private: true }));
      const tarballs = [];
      // One at a time: pack() finds its tarball as the new file in the folder.
      for (const dir of ['packages/nestjs', 'packages/core', 'packages/watchdog']) tarballs.push(await ctx.pack(dir));
      const nestPackages = ['common', 'core'].map((name) => `@nestjs/${name}@${nest}`);
      // 6, the last for Nest 10 and 11 both, and CommonJS (12 is ESM only: no run without require(esm)).
      nestPackages.push('@nestjs/schedule@6');
      await run(
        'npm',
        ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, ...nestPackages, 'reflect-metadata', 'rxjs', 'ioredis', '@types/node@20'],
        { cwd: app },
      );
      // The same source as a CommonJS module (.ts in a package without "type") and as ESM (.mts).
      await writeFile(join(app, 'src/app.ts'), APP);
      await copyFile(join(app, 'src/app.ts'), join(app, 'src/app.mts'));
      await writeFile(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            strict: true,
            experimentalDecorators: true,
            emitDecoratorMetadata: true,
            skipLibCheck: false,
            types: ['node'],
            lib: ['ES2022', 'ESNext.Disposable', 'DOM'],
            outDir: 'dist',
          },
          include: ['src'],
        }),
      );
      const compiled = await run('node', [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
        (error: { stdout?: string }) => ({ stdout: `tsc failed:\n${error.stdout ?? String(error)}` }),
      );
      expect(compiled.stdout).toBe('');
      const env = { ...process.env, REDIS_URL: ctx.urls()[0] };
      // Each process must end by itself: a handle left after app.close() would keep it running.
      for (const args of [['dist/app.js'], ['--no-experimental-require-module', 'dist/app.js'], ['dist/app.mjs']]) {
        const { stdout } = await run('node', args, { cwd: app, env, timeout: 60_000 });
        expect(JSON.parse(stdout), args.join(' ')).toEqual(EXPECTED);
      }
      await writeFile(join(app, 'jobs.test.js'), JEST_TEST);
      expect(await ctx.runJest(app, env)).toMatch(/Tests:\s+1 passed, 1 total/);
    }, 240_000);
  }
}
