import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientMode, nodeRedisMajor } from '../src/index.js';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Which client an example process really ran holdfast on: the example tests start each example
 * with `record-clients.cjs` preloaded, which writes the Redis client libraries the process loaded
 * at its exit. An example loads one library only (examples/shared/redis.mjs speaks to
 * redis-server over a plain socket), so that library is the one holdfast ran on.
 */
const RECORDER = path.join(import.meta.dirname, 'record-clients.cjs');

/**
 * The client examples/shared/redis.mjs must give in this pass: node-redis of the pass's major
 * with HOLDFAST_CLIENT=node-redis, else the pass's ioredis (ioredis 6 with HOLDFAST_IOREDIS=6,
 * through the resolve hook the pass adds to NODE_OPTIONS).
 */
export const PASS_CLIENT = clientMode === 'node-redis' ? `node-redis ${nodeRedisMajor}` : `ioredis ${process.env.HOLDFAST_IOREDIS === '6' ? '6' : '5'}`;

/** The client libraries each example loads in this pass: its own pick for node-redis-basic, the pass's for the rest. */
export function expectedClients(example: string): string[] {
  if (example !== 'node-redis-basic') return [PASS_CLIENT];
  // It imports `redis` itself: the major its package.json names, in every pass.
  const manifest = JSON.parse(readFileSync(path.join(root, 'examples', example, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  return [`node-redis ${manifest.dependencies.redis!.split('.')[0]}`];
}

/** A folder the recorder writes into, the env that turns it on, and what a process wrote. */
export function clientRecorder(): {
  env(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  loaded(pid: number | undefined): string[] | undefined;
  remove(): void;
} {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'holdfast-example-clients-'));
  return {
    env: (base) => ({
      ...base,
      HOLDFAST_EXAMPLE_CLIENTS_DIR: dir,
      NODE_OPTIONS: [base.NODE_OPTIONS, `--require=${RECORDER}`].filter(Boolean).join(' '),
    }),
    loaded: (pid) => {
      if (pid === undefined) return undefined;
      try {
        return JSON.parse(readFileSync(path.join(dir, `${pid}.json`), 'utf8')) as string[];
      } catch {
        return undefined;
      }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
