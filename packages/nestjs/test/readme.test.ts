import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sharedRedis } from '@holdfast/test-utils';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The package README's examples as a reader pastes them (the quick start, `@RunOnce`): compiled as
 * TypeScript with `experimentalDecorators` and `emitDecoratorMetadata` (the service gets its
 * LockClient by type), run on the built package against a real Redis with stubs for what they
 * call, booted and closed as an application is; the process must end by itself.
 */
const here = import.meta.dirname;
const readme = readFileSync(resolve(here, '../README.md'), 'utf8');

/** The first ts block after `heading`. */
function block(heading: string): string {
  const start = readme.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const found = /```ts\n([\s\S]*?)```/.exec(readme.slice(start));
  expect(found, `${heading} has a ts block`).not.toBeNull();
  return found![1]!;
}

const quickStart = () => block('## Quick start');

/** `source` then `main`, compiled as a reader's TypeScript and run as an ES module inside the package; the process must end by itself. */
async function runAsModule(source: string, main: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { url } = await sharedRedis();
  const { outputText } = ts.transpileModule(`${source}\n${main}`, {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
    },
  });
  // Inside the package, so its own name and its dependencies resolve as a user's would.
  const file = join(here, `.readme-${process.pid}.mjs`);
  writeFileSync(file, outputText);
  try {
    return await new Promise((done) => {
      const child = execFile(process.execPath, [file], { env: { ...process.env, REDIS_URL: url }, timeout: 30_000 }, (_e, stdout, stderr) =>
        done({ code: child.exitCode, stdout, stderr }),
      );
    });
  } finally {
    rmSync(file, { force: true });
  }
}

describe('packages/nestjs/README.md quick start', () => {
  it('boots, runs pay() under the lock with a fencing token, and exits after close()', async () => {
    const run = await runAsModule(
      `import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
const db = { query: async (_sql, params) => console.log('stub db.query', JSON.stringify(params)) };
${quickStart()}`,
      `const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
await app.get(InvoicesService).pay('42');
await app.close();
`,
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^stub db\.query \[\d+,"42"\]$/m);
  });

  it('the @RunOnce example runs its firing in one of two applications, with the claim', async () => {
    const run = await runAsModule(
      `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { HoldfastModule } from '@holdfast/nestjs';
const sendReport = async (options) => console.log('stub sendReport', typeof options.fence, options.signal.aborted);
${block('## `@RunOnce(key?, options?)`')}`,
      `const prefix = 'readme-once-' + process.pid + '-' + Date.now();
@Module({ imports: [HoldfastModule.forRoot({ client: () => new Redis(process.env.REDIS_URL), prefix })], providers: [ReportsService] })
class AppModule {}
const apps = [await NestFactory.createApplicationContext(AppModule, { logger: false }), await NestFactory.createApplicationContext(AppModule, { logger: false })];
const before = Date.now();
for (const app of apps) await app.get(ReportsService).hourly();
const after = Date.now();
for (const app of apps) await app.close();
console.log('one hour', new Date(before).getHours() === new Date(after).getHours());
`,
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    // Both calls fire the same hour's slot: one runs. (At a change of hour, the second is the next firing.)
    const [last, ...runs] = run.stdout.trim().split('\n').reverse();
    if (last === 'one hour true') expect(runs).toEqual(['stub sendReport number false']);
    else expect(runs).toEqual(['stub sendReport number false', 'stub sendReport number false']);
  });
});
