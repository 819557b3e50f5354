import type { RedisPort } from '@holdfast/core/workspace';
import { defineScript, portOf } from '@holdfast/core/workspace';
import type { RedisServer } from '@holdfast/test-utils';
import type { Redis, RedisOptions } from 'ioredis';
import { expect } from 'vitest';
import type { Flavour } from './client-differences.js';

/** What a contract file provides: one server, and clients of one library to it. */
export interface PortFixture {
  readonly flavour: Flavour;
  readonly server: () => RedisServer;
  /** An ioredis client for the test's own commands (never a port under test). */
  readonly admin: () => Redis;
  /** A client of the flavour (options in ioredis's words; `host`/`port` override the server's), closed after the file. */
  readonly client: (options?: RedisOptions) => Redis;
}

/** The port of a client, which must have one. */
export function port(client: object): RedisPort {
  const found = portOf(client);
  expect(found, 'the client has a port').toBeDefined();
  return found!;
}

/** A port whose client is connected (the application's client normally is). */
export async function readyPort(client: object): Promise<RedisPort> {
  const p = port(client);
  await waitReady(p);
  return p;
}

/** Resolves once the port says `ready`, by its events (no polling of the client). */
export async function waitReady(p: RedisPort, timeoutMs = 10_000): Promise<void> {
  if (p.status() === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready within ${timeoutMs} ms (status ${p.status()})`)), timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      p.off('ready', onReady);
      resolve();
    };
    p.on('ready', onReady);
    if (p.status() === 'ready') onReady();
  });
}

/** The outcome of a promise: its value, or the error it rejected with. */
export async function settle<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

/** Scripts of the contract, unlike any of core's, so their SHA is cached only once a test sends them. */
export const testScripts = {
  /** Not idempotent: a resent call is seen at the server. */
  incr: defineScript('port-incr', "-- port contract\nreturn redis.call('INCR', KEYS[1])"),
  /** Every reply type core's decoders meet: an integer, a string, an array with a nested one. */
  shapes: defineScript('port-shapes', "-- port contract\nreturn {tonumber(ARGV[1]), ARGV[2], {7, 'x'}}"),
  /** A script's nil: GET of a missing key. */
  missing: defineScript('port-missing', "-- port contract\nreturn redis.call('GET', KEYS[1])"),
  /** Writes a key (refused by an ACL without SET). */
  write: defineScript('port-write', "-- port contract\nreturn redis.call('SET', KEYS[1], ARGV[1])"),
};
