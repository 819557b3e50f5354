// A NestJS application locking through @holdfast/nestjs, written in TypeScript as Nest
// applications are (decorators, providers injected by type): compiled here with tsc, then run.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', import.meta.dirname], { stdio: 'inherit' });
await import('./dist/main.js');
