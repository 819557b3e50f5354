import { InvalidArgumentError } from '@holdfast/core';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fenceMysql from '../src/mysql.js';
import * as fencePg from '../src/pg.js';
import { testMysql, testPostgres } from '@holdfast/test-utils/databases';

/**
 * Arguments are refused with InvalidArgumentError and holdfast's one phrasing, before any
 * connection is taken: the pools below have one connection, which the last test still gets.
 */
describe.each([
  ['pg', fencePg, async () => new pg.Pool({ connectionString: (await testPostgres()).url, max: 1 })],
  ['mysql', fenceMysql, async () => mysql.createPool({ uri: (await testMysql()).url, connectionLimit: 1 })],
] as const)('@holdfast/fence/%s arguments', (_name, module, makePool) => {
  // Called with wrong arguments on purpose: the types would refuse them.
  const fence = module as unknown as Record<'fencedTransaction' | 'createFenceTable' | 'lastToken', (...args: unknown[]) => Promise<unknown>>;
  let pool: Awaited<ReturnType<typeof makePool>>;
  beforeAll(async () => {
    pool = await makePool();
  });
  afterAll(() => pool.end());

  const fenced = (fences: unknown, fn: unknown = async () => {}, options?: unknown) =>
    fence.fencedTransaction(pool as never, fences as never, fn as never, options as never);
  const refused = async (call: Promise<unknown>, message: string) => {
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ code: 'ERR_INVALID_ARGUMENT', message });
  };

  it('refuses a table name that is not a plain identifier of at most 63 characters, never truncating it', async () => {
    const expected = 'a plain identifier of at most 63 characters (a letter or `_`, then letters, digits or `_`)';
    for (const table of ['x'.repeat(64), 'fences; DROP TABLE t', 'public.fences', '1fences', '', 'fënces', 'fen"ces', 42]) {
      await refused(fenced({ resource: 'r', token: 1 }, undefined, { table }), `Expected \`table\` to be ${expected}, got \`${JSON.stringify(table)}\``);
      await refused(fence.createFenceTable(pool as never, { table } as never), `Expected \`table\` to be ${expected}, got \`${JSON.stringify(table)}\``);
      await refused(fence.lastToken(pool as never, 'r', { table } as never), `Expected \`table\` to be ${expected}, got \`${JSON.stringify(table)}\``);
    }
    await refused(fenced({ resource: 'r', token: 1 }, undefined, 'fences'), 'Expected `options` to be an object, got `"fences"`');
  });

  it('refuses resources, tokens, fence lists and fn of the wrong kind', async () => {
    await refused(fenced({ resource: '', token: 1 }), 'Expected `resource` to be a non-empty string, got `""`');
    await refused(fenced({ resource: 7, token: 1 }), 'Expected `resource` to be a non-empty string, got `7`');
    await refused(fenced({ resource: 'a\u0000b', token: 1 }), 'Expected `resource` to be a well-formed string without U+0000 (no unpaired UTF-16 surrogate), got `"a\\u0000b"`');
    await refused(fenced({ resource: 'é'.repeat(513), token: 1 }), 'Expected `resource` to be at most 1024 bytes, got 1026 bytes');
    await refused(fenced({ resource: 'r', token: -1 }), 'Expected `token` to be a non-negative integer, got `-1`');
    await refused(fenced({ resource: 'r', token: 1.5 }), 'Expected `token` to be a non-negative integer, got `1.5`');
    await refused(fenced({ resource: 'r', token: '3' }), 'Expected `token` to be a non-negative integer, got `"3"`');
    await refused(fenced({ resource: 'r', token: 2 ** 53 }), 'Expected `token` to be at most 9007199254740991, got `9007199254740992`');
    await refused(fenced([]), 'Expected `fences` to be a `{ resource, token }` or a non-empty array of them, got `[]`');
    await refused(fenced(null), 'Expected `fences` to be a `{ resource, token }` or a non-empty array of them, got `null`');
    await refused(
      fenced([{ resource: 'a', token: 1 }, { resource: 'a', token: 2 }]),
      'Expected `fences` to be a list naming each resource once, got `"a"`',
    );
    await refused(fenced({ resource: 'r', token: 1 }, 'not a function'), 'Expected `fn` to be a function, got `"not a function"`');
    await refused(fence.fencedTransaction(null as never, { resource: 'r', token: 1 }, async () => {}), `Expected \`db\` to be a ${_name === 'pg' ? 'pg Pool or Client' : 'mysql2/promise Pool or Connection'}, got \`null\``);
    await refused(fence.lastToken(pool as never, '' as never), 'Expected `resource` to be a non-empty string, got `""`');
  });

  it('accepts the longest names: a 63-character table, a 1024-byte resource', async () => {
    const table = `t${'x'.repeat(62)}`;
    try {
      await fence.createFenceTable(pool as never, { table });
      await fenced({ resource: 'é'.repeat(512), token: 3 }, async () => {}, { table });
      expect(await fence.lastToken(pool as never, 'é'.repeat(512), { table })).toBe(3);
    } finally {
      await (pool as pg.Pool).query(_name === 'pg' ? `DROP TABLE IF EXISTS "${table}"` : `DROP TABLE IF EXISTS \`${table}\``);
    }
  });
});
