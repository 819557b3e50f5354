import { readFileSync } from 'node:fs';
import { closedPort } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { BIN, holdfast } from './support.js';

const HINT = 'Run `holdfast --help` for the commands and options.';

/**
 * Every usage error is one line on stderr and exit 2, decided before any
 * connection: the URL below is a port nothing listens on, where a command that
 * went on to connect would exit 4.
 */
describe('holdfast CLI usage errors', () => {
  it('are one line on stderr and exit 2, with the message saying what is wrong', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    // An existing file: the refusal is about TLS being off, not about the file.
    const pem = BIN;
    const cases: [args: string[], message: string][] = [
      [['ls', '--frob'], `Unknown option \`--frob\`. ${HINT}`],
      [['watch', '--interval', '-5', '--once'], 'Expected `--interval` to be a positive integer, got `-5`'],
      [['watch', '--iterations', '0'], 'Expected `--iterations` to be a positive integer, got `0`'],
      [['ls', '--url'], `Option \`--url\` needs a value. ${HINT}`],
      [['ls', '--json=yes'], `Option \`--json\` takes no value. ${HINT}`],
      [['-x'], `Unknown option \`-x\`. ${HINT}`],
      [[], `Expected a command: ls, inspect, watch, release or inbox. ${HINT}`],
      [['frobnicate'], `Unknown command \`frobnicate\`. ${HINT}`],
      [['ls', 'a*', 'b*'], '`holdfast ls` takes at most one pattern'],
      [['inspect'], '`holdfast inspect` takes one lock name'],
      [['inspect', 'orders', '--kind', 'queue'], "Expected `--kind` to be one of 'lock', 'rwlock', 'semaphore', 'election', 'latch', 'barrier', 'idempotency', 'single-flight', got `queue`"],
      [['release', 'orders'], '`holdfast release` frees a lock whoever holds it: say so with `--force`'],
      [['ls', '--url', 'http://example'], 'Expected `--url` to be a redis:// or rediss:// URL, got `http://example`'],
      [['ls', '--url', `${url}/first`], 'Expected the database in `--url` to be a number, got `first`'],
      [['ls', '--user', 'ops'], "A user name needs a password: `--password`, $REDIS_PASSWORD or the URL's"],
      [['ls', '--tls-ca', pem], '`--tls-ca` applies to TLS only: add `--tls` or use a rediss:// URL'],
      [['ls', '--tls-cert', pem, '--tls-key', pem], '`--tls-cert` applies to TLS only: add `--tls` or use a rediss:// URL'],
      [['ls', '--tls-key', pem], '`--tls-key` applies to TLS only: add `--tls` or use a rediss:// URL'],
      [['ls', '--tls-insecure'], '`--tls-insecure` applies to TLS only: add `--tls` or use a rediss:// URL'],
    ];
    // A few processes at a time: each is a Node start, which a loaded machine makes slow.
    const results: Awaited<ReturnType<typeof holdfast>>[] = [];
    for (let i = 0; i < cases.length; i += 4) {
      const batch = cases.slice(i, i + 4).map(([args]) => holdfast([...args, ...(args.includes('--url') ? [] : ['--url', url])]));
      results.push(...(await Promise.all(batch)));
    }
    expect(results.map((r, i) => [cases[i]![0].join(' '), r.code, r.stdout, r.stderr])).toEqual(
      cases.map(([args, message]) => [args.join(' '), 2, '', `holdfast: ${message}\n`]),
    );
  }, 120_000);

  it("the README's `--kind` list is the kinds the CLI accepts", async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    // The list of every kind (`--kind election` alone, elsewhere, names one).
    const listed = /`--kind ([a-z-]+(?:\|[a-z-]+)+)`/.exec(readme)![1]!.split('|');
    const { code, stderr } = await holdfast(['inspect', 'x', '--kind', 'none', '--url', `redis://127.0.0.1:${await closedPort()}`]);
    expect(code).toBe(2);
    // "Expected `--kind` to be one of 'lock', 'rwlock', …, got `none`"
    const accepted = [...stderr.split('one of ')[1]!.split(', got')[0]!.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual(accepted.sort());
  });

  it('--help prints the usage on stdout, exit 0', async () => {
    const { code, stdout, stderr } = await holdfast(['--help']);
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout).toMatch(/^Usage: holdfast <command> \[options\]\n/);
  });
});
