import { lockKeys, registrationKey } from '@holdfast/core/workspace';
import { LockClient } from '@holdfast/core';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast, underPty } from './support.js';

/**
 * Lock names, client names and registrations are written by anyone who can
 * write keys under the prefix: what the CLI prints of them must not reach the
 * terminal as control characters (escape sequences, C1 controls, newlines that
 * forge table rows), and bytes that are not UTF-8 must show and keep the table whole.
 */

// Clears the screen, retitles the window, colours, a C1 CSI, a newline forging a row.
const LOCK = 'orders\x1b[2J\x1b[H\x1b]0;owned\x07\u009b31m\nfake  lock  nobody';
const RWLOCK = 'shelf\r\x1b[K\u0085';
const SEMAPHORE = 'pool\t\x1b[1A\\';
const CLIENT = 'evil\x1b[31m\u009b2J\nFAKE ROW\r\x07';
// A client id of no live client, registered by hand: a name with bytes that are not UTF-8 (0xff 0xfe) and an ESC.
const FORGED_ID = 'zzzzzzzz';
const FORGED_REGISTRATION = Buffer.concat([
  Buffer.from('{"name":"bad'),
  Buffer.from([0xff, 0xfe]),
  Buffer.from('\\u001b[2J","host":"h\\u001b]0;x\\u0007","pid":1,"startedAt":1}'),
]);
const FORGED_LOCK = 'forged';
// A lock key whose name is not UTF-8 (and carries an ESC and a newline), held by the forged client.
const RAW_NAME = Buffer.from([0x62, 0x61, 0x64, 0xff, 0xc3, 0x1b, 0x5b, 0x32, 0x4a, 0x0a, 0x78]);
const HOLDERS = 5;

/** Every C0 control but LF, DEL and every C1 control: none may reach the terminal. */
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

function expectPrintable(text: string): void {
  expect(text).not.toContain('\x1b');
  expect(text).not.toMatch(CONTROL);
}

describe('holdfast CLI prints hostile names and registrations escaped', () => {
  let server: RedisServer;
  let client: LockClient;
  const prefix = 'hostile';
  const url = () => server.url;
  const cli = (...args: string[]) => holdfast([...args, '--url', url(), '--prefix', prefix]);

  beforeAll(async () => {
    server = await startRedis();
    client = new LockClient(server.client(), { prefix, name: CLIENT });
    await client.lock(LOCK).acquire({ leaseMs: 60_000 });
    await client.readWriteLock(RWLOCK).read.acquire({ leaseMs: 60_000 });
    await client.semaphore(SEMAPHORE, { permits: 2 }).acquire({ leaseMs: 60_000 });
    // Written as holdfast's scripts write a held mutex: owner -> holds, '@<request>' -> token.
    const admin = server.client();
    const owner = `${FORGED_ID}-1`;
    await admin.set(registrationKey(prefix, FORGED_ID), FORGED_REGISTRATION, 'EX', 600);
    const forged = lockKeys(prefix, FORGED_LOCK).lock;
    await admin.hset(forged, owner, '1', '@r1', '7');
    await admin.pexpire(forged, 600_000);
    const raw = Buffer.concat([Buffer.from(`${prefix}:{0}:l:`), RAW_NAME]);
    await admin.hset(raw, owner, '1', '@r2', '8');
    await admin.pexpire(raw, 600_000);
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  it('ls: one row per holder, every name and client escaped, bytes that are not UTF-8 as U+FFFD', async () => {
    const { code, stdout, stderr } = await cli('ls');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expectPrintable(stdout);
    const rows = stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(1 + HOLDERS);
    const names = [
      'bad\ufffd\ufffd\\x1b[2J\\nx',
      FORGED_LOCK,
      'orders\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\u009b31m\\nfake  lock  nobody',
      'pool\\t\\x1b[1A\\\\',
      'shelf\\r\\x1b[K\\u0085',
    ];
    expect(rows.slice(1).map((row, i) => row.slice(0, names[i]!.length))).toEqual(names);
    expect(stdout).toContain('evil\\x1b[31m\\u009b2J\\nFAKE ROW\\r\\x07 (');
    expect(stdout).toContain('bad\ufffd\ufffd\\x1b[2J (h\\x1b]0;x\\x07:1)');
  });

  it('ls --json: names and clients exactly as stored, every control escaped; a name that is not UTF-8 with its bytes', async () => {
    const { code, stdout } = await cli('ls', '--json');
    expect(code).toBe(0);
    // JSON escapes C0 controls itself; C1 controls too (as \u009b), though JSON.stringify would not.
    expectPrintable(stdout);
    expect(stdout).toContain('\\u009b31m\\nfake');
    const states = JSON.parse(stdout) as LockState[];
    expect(states.map((s) => s.name).sort()).toEqual(['bad\ufffd\ufffd\x1b[2J\nx', FORGED_LOCK, LOCK, RWLOCK, SEMAPHORE].sort());
    const byName = new Map(states.map((s) => [s.name, s]));
    expect(byName.get(LOCK)!.holders[0]!.client.startsWith(`${CLIENT} (`)).toBe(true);
    expect(byName.get(FORGED_LOCK)!.holders[0]!.client).toBe('bad\ufffd\ufffd\x1b[2J (h\x1b]0;x\x07:1)');
    const raw = byName.get('bad\ufffd\ufffd\x1b[2J\nx')!;
    expect(raw.nameHex).toBe(RAW_NAME.toString('hex'));
    expect(raw.holders.map((h) => h.token)).toEqual([8]);
    expect(states.filter((s) => s.nameHex !== undefined)).toHaveLength(1);
  });

  it('inspect: the name, its key and its holder escaped; a missing hostile name escaped in the error', async () => {
    const { code, stdout } = await cli('inspect', LOCK);
    expect(code).toBe(0);
    expectPrintable(stdout);
    expect(stdout.split('\n')[0]).toBe('lock "orders\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\u009b31m\\nfake  lock  nobody"');
    const holderRows = stdout.slice(stdout.indexOf('holders  1'), stdout.indexOf('waiters  0')).trimEnd().split('\n');
    // The count line, the table's header, one holder.
    expect(holderRows).toHaveLength(3);
    expect(holderRows[2]).toContain('evil\\x1b[31m\\u009b2J\\nFAKE ROW\\r\\x07 (');

    const forged = await cli('inspect', FORGED_LOCK);
    expect(forged.code).toBe(0);
    expectPrintable(forged.stdout);
    expect(forged.stdout).toContain('bad\ufffd\ufffd\\x1b[2J (h\\x1b]0;x\\x07:1)');

    const missing = await cli('inspect', 'nope\x1b[2J\n\u009b');
    expect(missing.code).toBe(3);
    expectPrintable(missing.stderr);
    expect(missing.stderr).toBe('holdfast: No lock, read-write lock, semaphore, election, latch, barrier, idempotency key or flight named `nope\\x1b[2J\\n\\u009b` is held under prefix `hostile`\n');
  });

  it('watch --once, piped and on a terminal: rows escaped, no escape sequence but the screen handling of its own', async () => {
    const piped = await cli('watch', '--once');
    expect(piped.code).toBe(0);
    expectPrintable(piped.stdout);
    const [header, ...rows] = piped.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^holdfast watch {2}prefix hostile {2}5 held/);
    expect(rows).toHaveLength(1 + HOLDERS);

    const terminal = await underPty(['watch', '--once', '--url', url(), '--prefix', prefix]);
    expect(terminal.code).toBe(0);
    // The alternate screen, the cursor, home and clear: the watch's own sequences, and no other.
    const own = terminal.output.replaceAll(/\x1b\[\?1049[hl]|\x1b\[\?25[hl]|\x1b\[H\x1b\[J/g, '').replaceAll('\r\n', '\n');
    expectPrintable(own);
    expect(own).toContain('evil\\x1b[31m\\u009b2J\\nFAKE ROW\\r\\x07 (');
    expect(own.trim().split('\n').filter((line) => line.trim() !== '')).toHaveLength(2 + HOLDERS);
  });

  it('release: the question and the outcome quote the name escaped', async () => {
    const other = new LockClient(server.client(), { prefix: 'hostile-release', name: CLIENT });
    try {
      await other.lock(LOCK).acquire({ leaseMs: 60_000 });
      const args = ['release', LOCK, '--force', '--url', url(), '--prefix', 'hostile-release'];
      const declined = await underPty(args, { answerAfter: ['[y/N]', 'n\r'] });
      expect(declined.code).toBe(6);
      // readline's own cursor handling (to a column, clear below) and the echoed answer's line end are its only controls.
      const shown = declined.output.replaceAll(/\x1b\[\d+G|\x1b\[0J/g, '').replaceAll(/\r+\n/g, '\n');
      expectPrintable(shown);
      expect(shown).toContain('Force-release lock `orders\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\u009b31m\\nfake  lock  nobody` held by evil\\x1b[31m');
      const released = await holdfast([...args, '--yes']);
      expect(released.code).toBe(0);
      expect(released.stdout).toBe('Released lock `orders\\x1b[2J\\x1b[H\\x1b]0;owned\\x07\\u009b31m\\nfake  lock  nobody`\n');
    } finally {
      await other.close();
    }
  });

  it('usage errors quote hostile arguments escaped, on one line', async () => {
    const option = await holdfast(['ls', '--fr\x1b[2Job\n']);
    expect(option.code).toBe(2);
    expect(option.stderr).toBe('holdfast: Unknown option `--fr\\x1b[2Job\\n`. Run `holdfast --help` for the commands and options.\n');
    const command = await holdfast(['\u009b2J\rls']);
    expect(command.code).toBe(2);
    expect(command.stderr).toBe('holdfast: Unknown command `\\u009b2J\\rls`. Run `holdfast --help` for the commands and options.\n');
  });
});
