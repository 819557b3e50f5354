import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * `@holdfast/core`, `@holdfast/core/keys` and `@holdfast/core/internal` as
 * Node loads them from the built dist (through the package's `exports`, from
 * a package that depends on it): the three entries share one copy of every
 * module, so an error thrown below the internal entry is the public class;
 * the public entry carries no internals and no key layout, the key layout
 * entry carries the layout alone, and the internal entry only what Redlock
 * builds on (no public name but the one Redlock takes from it).
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
// A workspace package that depends on @holdfast/core: resolves it as users do, by its `exports`.
const consumerDir = resolve(root, 'packages/redlock');

/** Building blocks Redlock uses; none of them may be public. */
const INTERNALS = [
  'Hold',
  'HoldBook',
  'Waiters',
  'ServerCheck',
  'watchConnection',
  'currentOwner',
  'runOwning',
  'randomId',
  'callRedis',
  'withTimeout',
  'scripts',
  'runScript',
  'defineScript',
  'resolveAcquireOptions',
  'resolveCloseOptions',
  'driftMarginMs',
  'replies',
  'planRenewal',
  'traceAcquire',
  'traceRelease',
  'traceExtend',
  'traceRenewal',
  'publishLost',
];

/** The key layout, public through `@holdfast/core/keys` only. */
const KEYS = [
  'KEY_LAYOUT_VERSION',
  'KEY_TYPES',
  'lockKeys',
  'readWriteLockKeys',
  'semaphoreKeys',
  'electionKeys',
  'latchKeys',
  'barrierKeys',
  'idempotencyKeys',
  'flightKeys',
  'inboxKeys',
  'inboxIndexes',
  'CLIENT_ID_LENGTH',
  'REGISTRATION_TTL_S',
  'registrationKey',
  'parseClientRecord',
];

// Prints what the test compares: run by Node itself, not through vitest's module graph.
const probe = `
const out = {
  publicKeys: Object.keys(core).sort(),
  keyNames: Object.keys(keys).sort(),
  internalKeys: Object.keys(internal).sort(),
  sameEmit: core.emitSafely === internal.emitSafely,
  sameLayout: keys.lockKeys('p', 'n').lock === internal.lockKeys('p', 'n').lock,
};
internal.callRedis(() => Promise.reject(new Error('ERR boom')), { commandTimeoutMs: 1000, retries: 0 }).catch((error) => {
  out.instanceOfPublic = error instanceof core.RedisCommandError && error instanceof core.HoldfastError;
  console.log(JSON.stringify(out));
});
`;

async function load(format: 'esm' | 'cjs'): Promise<Record<string, unknown>> {
  const script =
    format === 'esm'
      ? `import * as core from '@holdfast/core'; import * as keys from '@holdfast/core/keys'; import * as internal from '@holdfast/core/internal';${probe}`
      : `const core = require('@holdfast/core'); const keys = require('@holdfast/core/keys'); const internal = require('@holdfast/core/internal');${probe}`;
  const args = format === 'esm' ? ['--input-type=module', '-e', script] : ['--input-type=commonjs', '-e', script];
  const { stdout } = await run('node', args, { cwd: consumerDir });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('the built entries of @holdfast/core', () => {
  for (const format of ['esm', 'cjs'] as const) {
    it(`share one copy of every module, and keep each entry to its contract (${format})`, async () => {
      const out = await load(format);
      expect(out.sameEmit).toBe(true);
      expect(out.sameLayout).toBe(true);
      expect(out.instanceOfPublic).toBe(true);
      const publicKeys = out.publicKeys as string[];
      const keyNames = out.keyNames as string[];
      const internalKeys = out.internalKeys as string[];
      expect(publicKeys).toContain('LockClient');
      expect(publicKeys).toContain('fencedWrite');
      // The option checks are public (nestjs and the watchdog use them), and Redlock's too.
      expect(publicKeys).toContain('validate');
      expect(internalKeys).toContain('validate');
      for (const name of INTERNALS) {
        expect(publicKeys, name).not.toContain(name);
        expect(internalKeys, name).toContain(name);
      }
      expect(keyNames).toEqual([...KEYS].sort());
      for (const name of KEYS) expect(publicKeys, name).not.toContain(name);
      // Redlock takes emitSafely and validate from the internal entry; no other public name is there.
      expect(internalKeys.filter((name) => publicKeys.includes(name)).sort()).toEqual(['emitSafely', 'validate']);
    }, 60_000);
  }
});
