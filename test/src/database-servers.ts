// Throwaway PostgreSQL and MariaDB servers from the installed binaries, for a machine that runs
// neither (databases.ts decides when). Each lives in a temporary directory, listens on a reserved
// loopback port, and is stopped when the test process exits, whatever ends it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
// The ports module alone: the bench's fence scenario runs this harness outside vitest (mapped
// by the bench's tsconfig paths there, by vitest's alias here).
import { releasePort, reservePort } from './ports.js';

const run = promisify(execFile);

/** A server this harness started. */
export interface SpawnedServer {
  readonly url: string;
  readonly description: string;
  stop(): Promise<void>;
}

/** Where to look for the binaries: the PATH, then the Debian PostgreSQL layout. */
export interface BinarySearch {
  readonly path?: string;
  readonly extraDirs?: readonly string[];
}

export const POSTGRES_MISSING =
  'PostgreSQL was not found (no local server at 127.0.0.1:5432, no initdb/postgres binaries): install it (Debian: apt-get install postgresql) or set PG_URL';
export const MARIADB_MISSING =
  'MariaDB was not found (no local server at 127.0.0.1:3306, no mariadb-install-db/mariadbd binaries): install it (Debian: apt-get install mariadb-server) or set MYSQL_URL';

function postgresDirs(): string[] {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return [];
  return readdirSync(base).sort().reverse().map((version) => join(base, version, 'bin'));
}

function find(name: string, search: BinarySearch, defaults: readonly string[]): string | undefined {
  const dirs = [...(search.path ?? process.env.PATH ?? '').split(delimiter), ...(search.extraDirs ?? defaults)];
  return dirs.filter(Boolean).map((dir) => join(dir, name)).find((file) => existsSync(file));
}

const children = new Set<ChildProcess>();
/** Data directories not removed yet: the exit hook removes them when a server was not stopped. */
const dirs = new Set<string>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Neither server runs as root: as root, run them as the `postgres` / `mysql` account the packages create. */
async function account(name: string): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { stdout: uid } = await run('id', ['-u', name]);
  const { stdout: gid } = await run('id', ['-g', name]);
  return { uid: Number(uid), gid: Number(gid) };
}

async function startProcess(bin: string, args: string[], ids: { uid: number; gid: number } | undefined): Promise<ChildProcess> {
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], ...(ids ?? {}) });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  child.once('exit', () => children.delete(child));
  child.once('error', () => children.delete(child));
  (child as ChildProcess & { stderrTail: () => string }).stderrTail = () => stderr;
  return child;
}

async function waitUntil(child: ChildProcess, ready: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited during start: ${(child as ChildProcess & { stderrTail: () => string }).stderrTail()}`);
    }
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${what} did not answer within 30 s`);
}

function stopper(child: ChildProcess, dir: string, port: number, signal: NodeJS.Signals): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      child.kill('SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
    dirs.delete(dir);
    releasePort(port);
  };
}

/** initdb + postgres in a temporary directory; `ping(url)` says when it answers. */
export async function spawnPostgres(ping: (url: string) => Promise<boolean>, search: BinarySearch = {}): Promise<SpawnedServer> {
  const initdb = find('initdb', search, postgresDirs());
  const postgres = find('postgres', search, postgresDirs());
  if (!initdb || !postgres) throw new Error(POSTGRES_MISSING);
  const dir = await mkdtemp(join(tmpdir(), 'holdfast-pg-'));
  dirs.add(dir);
  const ids = await account('postgres');
  if (ids) await chown(dir, ids.uid, ids.gid);
  const data = join(dir, 'data');
  await run(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], ids ?? {});
  const port = await reservePort();
  const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
  const child = await startProcess(postgres, args, ids);
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitUntil(child, () => ping(admin), `postgres (${postgres})`);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    description: `throwaway postgres on port ${port} (${postgres})`,
    stop: stopper(child, dir, port, 'SIGINT'),
  };
}

/** mariadb-install-db + mariadbd in a temporary directory; `ping(url)` says when it answers. */
export async function spawnMariadb(ping: (url: string) => Promise<boolean>, search: BinarySearch = {}): Promise<SpawnedServer> {
  const install = find('mariadb-install-db', search, ['/usr/bin', '/usr/sbin']);
  const server = find('mariadbd', search, ['/usr/sbin', '/usr/bin']);
  if (!install || !server) throw new Error(MARIADB_MISSING);
  const dir = await mkdtemp(join(tmpdir(), 'holdfast-mariadb-'));
  dirs.add(dir);
  const ids = await account('mysql');
  if (ids) await chown(dir, ids.uid, ids.gid);
  const data = join(dir, 'data');
  const user = ids ? ['--user=mysql'] : [];
  await run(install, ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user]);
  const port = await reservePort();
  const args = [
    '--no-defaults', `--datadir=${data}`, `--port=${port}`, '--bind-address=127.0.0.1', `--socket=${join(dir, 'sock')}`,
    `--pid-file=${join(dir, 'pid')}`, '--skip-log-bin', '--innodb-flush-log-at-trx-commit=0', ...user,
  ];
  const child = await startProcess(server, args, undefined);
  await waitUntil(child, () => ping(`mysql://root@127.0.0.1:${port}/mysql`), `mariadbd (${server})`);
  return {
    url: `mysql://root@127.0.0.1:${port}/mysql`,
    description: `throwaway mariadbd on port ${port} (${server})`,
    stop: stopper(child, dir, port, 'SIGTERM'),
  };
}
