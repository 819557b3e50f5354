import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clientRecorder, expectedClients } from './example-clients.js';

/**
 * The examples `pnpm demo` runs, run here too so CI keeps them working: each
 * starts its own redis-server (REDIS_URL is cleared), prints its lifecycle
 * events and must exit by itself with status 0. They import the built packages.
 * Each must also have run holdfast on the pass's client (node-redis in the
 * node-redis pass), as the process itself records (example-clients.ts).
 */
const root = resolve(import.meta.dirname, '../..');
const recorder = clientRecorder();
afterAll(() => recorder.remove());

const expectations: Record<string, RegExp[]> = {
  basic: [/\[alice\] acquired/, /LockTimeoutError|Timed out after/, /\[bob\] acquired/, /locked now\? false/],
  reentrant: [/holdCount":2,.*"reentrant":true/, /locked after both\? false/],
  fencing: [/lost +\{"name":"doc:1"/, /rejected as stale/, /written by fast/],
  watchdog: [/renewed 1 lease/, /LOST nightly-export \(unreachable\)/, /job stopped/],
  'redlock-basic': [/acquired/, /QuorumError/],
  'multi-lock': [/"multiLock":\["account:1","account:2"\]/, /total 200/, /audited: null; account:1 locked\? false/],
  'read-write-lock': [/readers inside at once: 3/, /order: writer then late reader/, /rejected as stale/, /ERR_LOCK_UPGRADE/, /locked now\? false/],
  election: [/web-2 elected \d+ ms after web-1 resigned/, /observer: web-1:9090 leads \(epoch 1\)/, /observer: web-3:8080 leads/, /epochs increase: true/, /leader at the end: null/],
  semaphore: [/peak permits in use: [1-3] of 3/, /got all 3 permits back/, /ERR_PERMIT_COUNT_MISMATCH/, /available at the end: 3/],
  'run-once': [/\d+ firings, each on one instance: true/, /"ran":true,"result":"sent by web-\d \(token \d+\)"/, /failed job: mail server down; another instance then: \{"ran":false\}/],
  'idempotent-http': [
    /^first: +201 \{"charged":1999,"by":"api-1","charge":"ch_1"\}\nduplicate: 409 .*\nduplicate: 409 .*\nretry: +201 \(replayed\) \{"charged":1999,"by":"api-1","charge":"ch_1"\}\nother body: 422 .*\ncharges: 1$/m,
  ],
  'chat-inbox': [
    /^handled: 12 of 12; in post order per thread: true; overlapping turns: 0$/m,
    /^pending after drain: 0$/m,
    /support-7: one turn for 3 messages: hi \/ my order is late \/ order #1234$/m,
  ],
  'latch-barrier': [/reporter: all 3 imports done/, /worker 4 through generation 1/, /ERR_BARRIER_BROKEN \(lost, generation 2\)/, /knew within its lease and 1 s/],
  operations: [
    /^holdfast watch {2}prefix example-ops {2}\d+ held {2}hand-offs\/s \d+\.\d {2}hand-offs since start \d+ {2}lost since start 0/m,
    /^catalog +rwlock:read +worker-2 \(/m,
    /^ +crashed-job \(.+\) +1 +\d+ /m,
    /^ +1 +worker-1 \(/m,
    /^Released lock `orders`$/m,
    /^worker-1 woken with token \d+$/m,
    /^holdfast ls: exit 3, holdfast: Nothing held under prefix `example-ops`$/m,
  ],
  nestjs: [
    /^\[alice\] paying invoice 42 \(token 1\)\n\[alice\] audit of invoice 42 inside the same lock: holdCount 2\n\[alice\] paid invoice 42\n\[bob\] paying invoice 42 \(token 2\)$/m,
    /^refund: LockTimeoutError\nrefunded invoice 7\nafter shutdown: ClientClosedError$/m,
    /^\[web-[12]\] ran ReportsService\.everySecond:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/m,
    /^[3-9] firings, each on one instance: true$/m,
  ],
  // PostgreSQL at PG_URL or on this machine: the frozen holder's write is refused by the database.
  'fence-postgres': [/holder frozen \(SIGSTOP\)/, /^holder: FencedOffError \(ERR_FENCED_OFF\)/m, /^invoice 42 paid_by rival; stored token 2$/m],
  // A fresh server: the first two acquisitions of the name get tokens 1 and 2.
  'node-redis-basic': [/^db\.query UPDATE invoices .* fence < \$1 \[1\]\ndb\.query UPDATE invoices .* fence < \$1 \[2\]$/m],
};

function runExample(name: string): Promise<{ code: number | null; stdout: string; stderr: string; clients: string[] | undefined }> {
  const env = recorder.env({ ...process.env });
  delete env.REDIS_URL;
  return new Promise((done) => {
    const child = execFile('node', ['index.mjs'], { cwd: resolve(root, 'examples', name), env, timeout: 60_000 }, (_error, stdout, stderr) =>
      done({ code: child.exitCode, stdout, stderr, clients: recorder.loaded(child.pid) }),
    );
  });
}

describe('examples', () => {
  for (const [name, patterns] of Object.entries(expectations)) {
    it(`examples/${name} runs to completion on ${expectedClients(name).join(', ')}`, async () => {
      const run = await runExample(name);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      for (const pattern of patterns) expect(run.stdout).toMatch(pattern);
      expect(run.clients).toEqual(expectedClients(name));
    }, 90_000);
  }
});
