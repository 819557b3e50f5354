import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { LockClient } from '@holdfast/core';
import { nodeRedis, startRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releasePort, reservePort } from '../src/ports.js';

/**
 * TLS, with each client: a server that also listens with TLS (a certificate of a CA made for the
 * test), and holdfast on a client that connects there: its commands and its pub/sub subscriber
 * (a duplicate of the client, so TLS too) carry a lock, a hand-off and a renewal.
 */
const run = promisify(execFile);
let dir: string;
let server: RedisServer;
let tlsPort: number | undefined;
let ca: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'holdfast-tls-'));
  const file = (name: string) => path.join(dir, name);
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=holdfast-test-ca', '-keyout', file('ca.key'), '-out', file('ca.crt')]);
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('server.key'), '-out', file('server.csr')]);
  // Node checks the address it connected to against the certificate's subjectAltName.
  await writeFile(file('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  await run('openssl', ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', file('san.ext'), '-out', file('server.crt')]);
  ca = await readFile(file('ca.crt'));
  tlsPort = await reservePort();
  server = await startRedis({
    args: ['--tls-port', String(tlsPort), '--tls-cert-file', file('server.crt'), '--tls-key-file', file('server.key'), '--tls-ca-cert-file', file('ca.crt'), '--tls-auth-clients', 'no'],
  });
}, 60_000);

const opened: { close(): void }[] = [];
afterAll(async () => {
  for (const client of opened.splice(0)) client.close();
  await server?.stop();
  if (tlsPort !== undefined) releasePort(tlsPort);
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function exercise(a: LockClient, b: LockClient): Promise<void> {
  const errors: unknown[] = [];
  a.on('error', (error) => errors.push(error));
  b.on('error', (error) => errors.push(error));
  const watchdog = new Watchdog(a, { timeoutMs: 300 });
  let renewed = 0;
  watchdog.on('renewed', ({ count }) => (renewed += count));
  const held = await a.lock('tls').acquire();
  const waiting = b.lock('tls').acquire({ waitMs: 20_000 });
  // Renewed over TLS while a waiter is queued.
  await waitFor(() => renewed >= 2);
  await held.release();
  const next = await waiting;
  expect(next.token).toBeGreaterThan(held.token);
  await next.release();
  await watchdog.stop();
  await a.close();
  await b.close();
  expect(errors).toEqual([]);
}

describe('TLS', () => {
  it('ioredis', async () => {
    const connect = () => {
      const redis = new Redis({ host: '127.0.0.1', port: tlsPort, tls: { ca, servername: '127.0.0.1' } });
      redis.on('error', () => undefined);
      opened.push({ close: () => redis.disconnect() });
      return redis;
    };
    const prefix = uniqueName('tls');
    await exercise(new LockClient(connect(), { prefix }), new LockClient(connect(), { prefix }));
  });

  it.each(['5', '6'] as const)('node-redis %s', async (major) => {
    const connect = async () => {
      const redis: any = nodeRedis(major).createClient({ socket: { host: '127.0.0.1', port: tlsPort, tls: true, ca, servername: '127.0.0.1' } });
      redis.on('error', () => undefined);
      opened.push({ close: () => redis.destroy?.() });
      await redis.connect();
      return redis;
    };
    const prefix = uniqueName('tls');
    await exercise(new LockClient(await connect(), { prefix }), new LockClient(await connect(), { prefix }));
  });
});
