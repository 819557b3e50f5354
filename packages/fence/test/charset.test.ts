import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Driver } from './drivers.js';
import { uniqueTable } from '@holdfast/test-utils/databases';

/**
 * A resource is stored and compared as its UTF-8 bytes whatever the character set of the
 * connection it comes through (mysql2's `charset`, PostgreSQL's `client_encoding`): a Latin-1
 * connection and a UTF-8 one, side by side, meet on one row per resource.
 */
describe.each(Object.keys(DRIVERS) as (keyof typeof DRIVERS)[])('resources through Latin-1 and UTF-8 connections on %s', (name) => {
  let utf8: Driver;
  let latin1: Driver;
  const table = uniqueTable('charset');
  const options = { table };
  const fenced = (db: Driver, resource: string, token: number) => db.fenced({ resource, token }, async () => 'written', options);

  beforeAll(async () => {
    utf8 = await DRIVERS[name](1);
    latin1 = await DRIVERS[name](1, 'latin1');
    await utf8.createFenceTable(options);
  });
  afterAll(async () => {
    await utf8?.exec(`DROP TABLE IF EXISTS ${table}`);
    await Promise.all([utf8?.close(), latin1?.close()]);
  });

  it('refuses a stale token through one after a newer one through the other; Ω and © stay two rows', async () => {
    const charset = name === 'postgres' ? 'SHOW client_encoding' : 'SELECT @@character_set_client AS client_encoding';
    expect((await latin1.exec(charset))[0]!.client_encoding).toMatch(/^latin1$/i);

    expect(await fenced(utf8, 'cs:Ω', 20)).toBe('written');
    await expect(fenced(latin1, 'cs:Ω', 19)).rejects.toMatchObject({ code: 'ERR_FENCED_OFF', resource: 'cs:Ω', token: 19, currentToken: 20 });
    expect(await fenced(latin1, 'cs:©', 30)).toBe('written');
    await expect(fenced(utf8, 'cs:©', 29)).rejects.toMatchObject({ code: 'ERR_FENCED_OFF', resource: 'cs:©', token: 29, currentToken: 30 });

    for (const db of [utf8, latin1]) {
      expect([await db.lastToken('cs:Ω', options), await db.lastToken('cs:©', options)]).toEqual([20, 30]);
    }
    const stored = name === 'postgres' ? `encode(convert_to(resource, 'UTF8'), 'hex')` : 'LOWER(HEX(resource))';
    const rows = await utf8.exec(`SELECT ${stored} AS bytes FROM ${table} ORDER BY 1`);
    expect(rows.map((row) => row.bytes)).toEqual([Buffer.from('cs:©').toString('hex'), Buffer.from('cs:Ω').toString('hex')]);
  });
});
