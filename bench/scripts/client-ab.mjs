// Client-side A/B of two holdfast builds in one process: a baseline copy of
// packages/{core,redlock} (package.json + dist) under $BASELINE/node_modules/@holdfast
// (their dependencies linked beside them) against this checkout's build, with
// redis-semaphore Mutex and redlock@5, in alternating blocks of acquire + release
// cycles, several rounds. Prints p50 and client CPU (process.cpuUsage) per cycle,
// medians over the rounds, as ratios to the last library of each scenario.
//   ROUNDS=9 CYCLES=2000 BASELINE=/tmp/holdfast-baseline node bench/scripts/client-ab.mjs
// ONLY=single,rl3,rl5 picks scenarios.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
const req = createRequire(import.meta.url);
const Redis = req('ioredis');
const { Mutex } = req('redis-semaphore');
const Redlock = (await import('redlock')).default;
const NEW_CORE = await import('@holdfast/core');
const NEW_RL = await import('@holdfast/redlock');
const BASELINE = process.env.BASELINE ?? '/tmp/holdfast-baseline';
const BASE_CORE = await import(`${BASELINE}/node_modules/@holdfast/core/dist/index.js`);
const BASE_RL = await import(`${BASELINE}/node_modules/@holdfast/redlock/dist/index.js`);

const ROUNDS = Number(process.env.ROUNDS ?? 6), CYCLES = Number(process.env.CYCLES ?? 400), BLOCKS = 4;
const ports = [7411, 7412, 7413, 7414, 7415];
const procs = ports.map((p) => spawn('redis-server', ['--port', String(p), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
process.on('exit', () => procs.forEach((p) => p.kill()));
await sleep(300);
const conn = async (p) => { const r = new Redis(p, '127.0.0.1'); await new Promise((res) => r.once('ready', res)); return r; };
const LEASE = 30000;
function hf(core) { return async (ports) => { const r = await conn(ports[0]); const c = new core.LockClient(r, { prefix: 'x' + Math.random() }); return { acquire: async (k) => { const l = await c.lock(k).acquire(); return () => l.release(); } }; }; }
function hfrl(rl) { return async (ps) => { const rs = await Promise.all(ps.map(conn)); const c = new rl.Redlock(rs, { prefix: 'y' + Math.random() }); return { acquire: async (k) => { const l = await c.lock(k).acquire(); return () => l.release(); } }; }; }
const sem = async (ps) => { const r = await conn(ps[0]); return { acquire: async (k) => { const m = new Mutex(r, k, { onLockLost: () => {} }); await m.acquire(); return () => m.release(); } }; };
const rl5 = async (ps) => { const rs = await Promise.all(ps.map(conn)); const r = new Redlock(rs); r.on('error', () => {}); return { acquire: async (k) => { const l = await r.acquire([k], LEASE); return async () => { await l.release(); }; } }; };

async function scenario(title, n, libs) {
  const ps = ports.slice(0, n);
  const opened = [];
  for (const [id, open] of libs) opened.push({ id, l: await open(ps), cpu: [], p50: [] });
  for (const o of opened) for (let i = 0; i < 100; i++) { const rel = await o.l.acquire('w' + o.id); await rel(); }
  const blk = Math.ceil(CYCLES / BLOCKS);
  for (let r = 0; r < ROUNDS; r++) {
    const us = new Map(opened.map((o) => [o.id, []])); const cpu = new Map(opened.map((o) => [o.id, 0]));
    for (let b = 0; b < BLOCKS; b++) {
      const order = opened.map((_, i) => opened[(i + b + r) % opened.length]);
      for (const o of order) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < blk; i++) { const t = performance.now(); try { const rel = await o.l.acquire('k' + o.id); await rel(); } catch (e) { o.errors = (o.errors ?? 0) + 1; if (o.errors <= 3) console.error(o.id, String(e).slice(0, 300)); await sleep(60); continue; } us.get(o.id).push((performance.now() - t) * 1000); }
        const c = process.cpuUsage(c0); cpu.set(o.id, cpu.get(o.id) + c.user + c.system);
      }
    }
    for (const o of opened) { const a = us.get(o.id).sort((x, y) => x - y); o.p50.push(a[a.length >> 1]); o.cpu.push(cpu.get(o.id) / (blk * BLOCKS)); }
  }
  const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const ref = opened.find((o) => o.id === libs.refId) ?? opened[opened.length - 1];
  console.log(`\n== ${title} (${n} instance${n > 1 ? 's' : ''}), ${ROUNDS} rounds x ${CYCLES} cycles; ratios to ${ref.id}`);
  for (const o of opened) console.log(`${o.id.padEnd(18)} p50 ${med(o.p50).toFixed(0).padStart(5)} µs (${(med(o.p50) / med(ref.p50)).toFixed(2)}x)  cpu ${med(o.cpu).toFixed(1).padStart(6)} µs (${(med(o.cpu) / med(ref.cpu)).toFixed(2)}x)   rounds p50 ${o.p50.map((x) => x.toFixed(0)).join(' ')}  errors ${o.errors ?? 0}`);
}
const only = (process.env.ONLY ?? 'single,rl3,rl5').split(',');
if (only.includes('single')) { const l = [['holdfast-before', hf(BASE_CORE)], ['holdfast-after', hf(NEW_CORE)], ['redlock@5', rl5], ['redis-semaphore', sem]]; await scenario('single instance', 1, l); }
if (only.includes('rl3')) await scenario('Redlock', 3, [['redlock-before', hfrl(BASE_RL)], ['redlock-after', hfrl(NEW_RL)], ['redlock@5', rl5]]);
if (only.includes('rl5')) await scenario('Redlock', 5, [['redlock-before', hfrl(BASE_RL)], ['redlock-after', hfrl(NEW_RL)], ['redlock@5', rl5]]);
process.exit(0);
