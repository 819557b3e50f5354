import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sharedRedis } from '@holdfast/test-utils';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The package README's quick start as a reader pastes it: compiled as TypeScript with
 * `experimentalDecorators` and `emitDecoratorMetadata` (the service gets its LockClient by type),
 * run on the built package against a real Redis with a stub `db`, booted and closed as an
 * application is; the process must end by itself.
 */
const here = import.meta.dirname;
const readme = readFileSync(resolve(here, '../README.md'), 'utf8');

function quickStart(): string {
  const start = readme.indexOf('## Quick start');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(start));
  expect(block, 'the quick start has a ts block').not.toBeNull();
  return block![1]!;
}

describe('packages/nestjs/README.md quick start', () => {
  it('boots, runs pay() under the lock with a fencing token, and exits after close()', async () => {
    const { url } = await sharedRedis();
    const { outputText } = ts.transpileModule(quickStart(), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      },
    });
    const program = `import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
const db = { query: async (_sql, params) => console.log('stub db.query', JSON.stringify(params)) };
${outputText}
const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
await app.get(InvoicesService).pay('42');
await app.close();
`;
    // Inside the package, so its own name and its dependencies resolve as a user's would.
    const file = join(here, `.readme-quick-start-${process.pid}.mjs`);
    writeFileSync(file, program);
    try {
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        const child = execFile(process.execPath, [file], { env: { ...process.env, REDIS_URL: url }, timeout: 30_000 }, (_e, stdout, stderr) =>
          done({ code: child.exitCode, stdout, stderr }),
        );
      });
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^stub db\.query \[\d+,"42"\]$/m);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
