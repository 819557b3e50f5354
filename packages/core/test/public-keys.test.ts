import { describe, expect, it } from 'vitest';
import {
  KEY_LAYOUT_VERSION,
  KEY_TYPES,
  barrierKeys,
  electionKeys,
  flightKeys,
  idempotencyKeys,
  latchKeys,
  lockKeys,
  readWriteLockKeys,
  semaphoreKeys,
} from '@holdfast/core/keys';

/**
 * `@holdfast/core/keys` is the layout readers rely on: its type-word table
 * names exactly the keys the builders (the ones every script is given) make,
 * all in one tagged slot of the prefix.
 */
describe('@holdfast/core/keys', () => {
  const prefix = 'layout';
  const name = 'orders/42';
  const base = lockKeys(prefix, name).lock.slice(0, -`l:${name}`.length);

  it('builds every key as <prefix>:{<tag>}:<type word><name>', () => {
    expect(KEY_LAYOUT_VERSION).toBe(1);
    expect(base).toMatch(/^layout:\{[0-9a-z]+\}:$/);
    const built: Record<keyof typeof KEY_TYPES, object> = {
      lock: lockKeys(prefix, name),
      rwlock: readWriteLockKeys(prefix, name),
      semaphore: semaphoreKeys(prefix, name),
      election: electionKeys(prefix, name),
      latch: latchKeys(prefix, name),
      barrier: barrierKeys(prefix, name),
      idempotency: idempotencyKeys(prefix, 'orders', '42'),
      'single-flight': flightKeys(prefix, name),
    };
    for (const [kind, roles] of Object.entries(KEY_TYPES) as [keyof typeof KEY_TYPES, Record<string, string>][]) {
      const keyName = kind === 'idempotency' ? '6:orders:42' : name;
      const keys = built[kind] as Record<string, unknown>;
      const keyBase = kind === 'idempotency' ? `${String(keys.record).split('}:')[0]}}:` : base;
      for (const [role, word] of Object.entries(roles)) expect(keys[role], `${kind}.${role}`).toBe(`${keyBase}${word}${keyName}`);
    }
  });

  it('keeps a read-write lock and a mutex of one name apart, in one slot', () => {
    const mutex = lockKeys(prefix, name);
    const rw = readWriteLockKeys(prefix, name);
    expect(rw.lock).not.toBe(mutex.lock);
    expect(rw.slot).toBe(mutex.slot);
    expect(rw.fence).toBe(mutex.fence);
  });
});
