import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * `@holdfast/core` and `@holdfast/core/internal` as Node loads them from the
 * built dist (through the package's `exports`, from a package that depends on
 * it): both entries share one copy of every module, so a class is one class
 * whichever entry it came through, and the public entry carries no internals.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
// A workspace package that depends on @holdfast/core: resolves it as users do, by its `exports`.
const consumerDir = resolve(root, 'packages/redlock');

/** Building blocks the other holdfast packages use; none of them may be public. */
const INTERNALS = [
  'Hold',
  'DeadlineTimer',
  'Waiter',
  'Waiters',
  'ServerCheck',
  'watchConnection',
  'currentOwner',
  'runOwning',
  'randomId',
  'callRedis',
  'withTimeout',
  'isTransient',
  'scripts',
  'runScript',
  'runScriptReplicated',
  'defineScript',
  'resolveClientOptions',
  'resolveAcquireOptions',
  'resolveCloseOptions',
  'driftMarginMs',
  'validate',
  'replies',
  'planRenewal',
  'RENEW_CHUNK',
  'lockKeys',
  'slotOf',
  'emitSafely',
  'semaphoreKeys',
  'semaphoreScripts',
  'CLIENT_ID_LENGTH',
  'REGISTRATION_TTL_S',
  'registrationKey',
  'traceAcquire',
  'traceRelease',
  'traceExtend',
  'traceRenewal',
  'publishLost',
  'parseClientRecord',
];

// Prints what the test compares: run by Node itself, not through vitest's module graph.
const probe = `
const out = {
  publicKeys: Object.keys(core).sort(),
  internalKeys: Object.keys(internal).sort(),
  sameClasses: ['LockLostError', 'RedisCommandError', 'HoldfastError', 'Lease', 'LockClient'].every((k) => core[k] === internal[k]),
};
internal.callRedis(() => Promise.reject(new Error('ERR boom')), { commandTimeoutMs: 1000, retries: 0 }).catch((error) => {
  out.instanceOfPublic = error instanceof core.RedisCommandError && error instanceof core.HoldfastError;
  out.lost = new internal.LockLostError('x', 1, 'expired') instanceof core.LockLostError;
  console.log(JSON.stringify(out));
});
`;

async function load(format: 'esm' | 'cjs'): Promise<Record<string, unknown>> {
  const script =
    format === 'esm'
      ? `import * as core from '@holdfast/core'; import * as internal from '@holdfast/core/internal';${probe}`
      : `const core = require('@holdfast/core'); const internal = require('@holdfast/core/internal');${probe}`;
  const args = format === 'esm' ? ['--input-type=module', '-e', script] : ['--input-type=commonjs', '-e', script];
  const { stdout } = await run('node', args, { cwd: consumerDir });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('the built entries of @holdfast/core', () => {
  for (const format of ['esm', 'cjs'] as const) {
    it(`share one copy of every class, and keep internals off the public entry (${format})`, async () => {
      const out = await load(format);
      expect(out.sameClasses).toBe(true);
      expect(out.instanceOfPublic).toBe(true);
      expect(out.lost).toBe(true);
      const publicKeys = out.publicKeys as string[];
      const internalKeys = out.internalKeys as string[];
      expect(publicKeys).toContain('LockClient');
      expect(publicKeys).toContain('fencedWrite');
      for (const name of INTERNALS) {
        expect(publicKeys, name).not.toContain(name);
        expect(internalKeys, name).toContain(name);
      }
      // The internal entry is a superset: the other packages import one module.
      for (const name of publicKeys) expect(internalKeys, name).toContain(name);
    }, 60_000);
  }
});
