import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LockClient } from '@holdfast/core';
import { releasePort, reservePort, startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast } from './support.js';

/** A throwaway CA, and a server and a client certificate it signed, in `dir`. */
function certificates(dir: string): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=holdfast test CA');
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [who, ext] of [['server', ['-extfile', file('server.ext')]], ['client', []]] as const) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file(`${who}.key`), '-out', file(`${who}.csr`), '-subj', `/CN=${who}`);
    openssl('x509', '-req', '-in', file(`${who}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file(`${who}.pem`), '-days', '2', ...ext);
  }
  return { ca: file('ca.pem'), serverCert: file('server.pem'), serverKey: file('server.key'), clientCert: file('client.pem'), clientKey: file('client.key') };
}

/** The CLI over TLS, against a redis-server listening with TLS (client certificates required) beside its plain port. */
describe('holdfast CLI over TLS', () => {
  let dir: string;
  let certs: ReturnType<typeof certificates>;
  let server: RedisServer;
  let tlsPort: number | undefined;
  let locks: LockClient;
  const prefix = 'tls';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'holdfast-tls-'));
    certs = certificates(dir);
    tlsPort = await reservePort();
    server = await startRedis({
      args: ['--tls-port', String(tlsPort), '--tls-cert-file', certs.serverCert, '--tls-key-file', certs.serverKey, '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'yes'],
    });
    // Seeded over the plain port; the CLI reads it over TLS.
    locks = new LockClient(server.client(), { prefix, name: 'tls-holder' });
    await locks.lock('secured').acquire({ leaseMs: 60_000 });
    await locks.semaphore('pool', { permits: 2 }).acquire({ leaseMs: 60_000 });
  }, 60_000);
  afterAll(async () => {
    await locks?.close();
    await server?.stop();
    if (tlsPort !== undefined) releasePort(tlsPort);
    rmSync(dir, { recursive: true, force: true });
  });

  const tlsUrl = () => `rediss://127.0.0.1:${tlsPort}`;
  const clientCert = () => ['--tls-cert', certs.clientCert, '--tls-key', certs.clientKey];

  it('rediss:// with the CA and a client certificate: ls and inspect read the locks', async () => {
    const ls = await holdfast(['ls', '--url', tlsUrl(), '--tls-ca', certs.ca, ...clientCert(), '--prefix', prefix, '--json']);
    expect(ls.stderr).toBe('');
    expect(ls.code).toBe(0);
    const states = JSON.parse(ls.stdout) as LockState[];
    expect(states.map((s) => [s.name, s.kind])).toEqual([
      ['pool', 'semaphore'],
      ['secured', 'lock'],
    ]);
    expect(states[1]!.holders[0]!.client).toMatch(/^tls-holder \(/);
    const inspect = await holdfast(['inspect', 'secured', '--url', tlsUrl(), '--tls-ca', certs.ca, ...clientCert(), '--prefix', prefix]);
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toContain('secured');
  });

  it('--tls turns TLS on for a redis:// URL; --tls-insecure accepts a certificate no trusted CA signed', async () => {
    const flag = await holdfast(['ls', '--url', `redis://127.0.0.1:${tlsPort}`, '--tls', '--tls-ca', certs.ca, ...clientCert(), '--prefix', prefix]);
    expect(flag.code).toBe(0);
    expect(flag.stdout).toContain('secured');
    const insecure = await holdfast(['ls', '--url', tlsUrl(), '--tls-insecure', ...clientCert(), '--prefix', prefix]);
    expect(insecure.code).toBe(0);
    expect(insecure.stdout).toContain('secured');
  });

  it('exit 4 with the reason: an untrusted server certificate, no client certificate, TLS to a plain port', async () => {
    // Run side by side: the plain port's case waits out the connect timeout.
    const [untrusted, noClientCert, plain] = await Promise.all([
      holdfast(['ls', '--url', tlsUrl(), ...clientCert(), '--prefix', prefix]),
      holdfast(['ls', '--url', tlsUrl(), '--tls-ca', certs.ca, '--prefix', prefix]),
      holdfast(['ls', '--url', `rediss://127.0.0.1:${server.port}`, '--tls-ca', certs.ca, ...clientCert(), '--prefix', prefix]),
    ]);
    expect(untrusted.code).toBe(4);
    expect(untrusted.stderr).toMatch(/^holdfast: Cannot reach Redis: .*(self[- ]signed|unable to (get|verify))/im);

    expect(noClientCert.code).toBe(4);
    expect(noClientCert.stderr).toMatch(/^holdfast: Cannot reach Redis: /m);

    expect(plain.code).toBe(4);
    expect(plain.stderr).toMatch(/^holdfast: Cannot reach Redis: .*\(no TLS handshake answered: does this port speak TLS\?\)$/m);
  });

  it('exit 2 for a TLS file that cannot be read, naming the option', async () => {
    const missing = path.join(dir, 'absent.pem');
    const { code, stderr } = await holdfast(['ls', '--url', tlsUrl(), '--tls-ca', missing, '--prefix', prefix]);
    expect(code).toBe(2);
    expect(stderr).toContain(`Expected \`--tls-ca\` to be a readable PEM file, got \`${missing}\` (ENOENT)`);
  });
});
