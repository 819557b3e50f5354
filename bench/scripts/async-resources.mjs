// Async resources (promises, timers, ticks...) created per uncontended acquire + release
// cycle, counted with an async_hooks init hook: independent of the machine's load.
//   node bench/scripts/async-resources.mjs     (BASE=1: the baseline build of client-ab.mjs)
import { spawn } from 'node:child_process';
import { createHook } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
const req = createRequire(import.meta.url);
const Redis = req('ioredis');
const { Mutex } = req('redis-semaphore');
const Redlock5 = (await import('redlock')).default;
const BASE = process.env.BASE === '1';
const BASELINE = process.env.BASELINE ?? '/tmp/holdfast-baseline';
const { LockClient } = await import(BASE ? `${BASELINE}/node_modules/@holdfast/core/dist/index.js` : '@holdfast/core');
const { Redlock } = await import(BASE ? `${BASELINE}/node_modules/@holdfast/redlock/dist/index.js` : '@holdfast/redlock');
const ports = [7431, 7432, 7433];
const procs = ports.map((p) => spawn('redis-server', ['--port', String(p), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
process.on('exit', () => procs.forEach((p) => p.kill()));
await sleep(300);
const conn = async (p) => { const r = new Redis(p, '127.0.0.1'); await new Promise((res) => r.once('ready', res)); return r; };
const rs = await Promise.all(ports.map(conn));
const r5 = new Redlock5(rs); r5.on('error', () => {});
const libs = {
  holdfast: new LockClient(rs[0]).lock('a'),
  'redis-semaphore': { acquire: async () => { const m = new Mutex(rs[0], 'b', { onLockLost() {} }); await m.acquire(); return { release: () => m.release() }; } },
  'holdfast-redlock3': new Redlock(rs).lock('c'),
  'redlock@5 (3)': { acquire: async () => { const l = await r5.acquire(['d'], 30000); return { release: () => l.release() }; } },
};
const counts = new Map(); let on = false;
createHook({ init(id, type) { if (on) counts.set(type, (counts.get(type) ?? 0) + 1); } }).enable();
for (const [name, lock] of Object.entries(libs)) {
  for (let i = 0; i < 50; i++) { const l = await lock.acquire(); await l.release(); }
  await sleep(20);
  counts.clear(); on = true; const N = 1000;
  for (let i = 0; i < N; i++) { const l = await lock.acquire(); await l.release(); }
  on = false;
  console.log(name.padEnd(20), [...counts].map(([k, v]) => `${k} ${(v / N).toFixed(1)}`).join(', '));
}
process.exit(0);
