import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
const req = createRequire('/work/main/bench/package.json');
const Redis = req('ioredis');
const { Redlock } = await import(process.env.RL ?? '/work/main/packages/redlock/dist/index.js');
const N = Number(process.env.N ?? 5), CYCLES = Number(process.env.CYCLES ?? 20000);
const ports = [7451, 7452, 7453, 7454, 7455].slice(0, N);
const procs = ports.map((p) => spawn('redis-server', ['--port', String(p), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
process.on('exit', () => procs.forEach((p) => p.kill()));
await sleep(300);
const rs = await Promise.all(ports.map(async (p) => { const r = new Redis(p, '127.0.0.1'); await new Promise((res) => r.once('ready', res)); return r; }));
let cycle;
let rl;
if (process.env.LIB === 'rl5') { const m = req('redlock'); const R5 = m.default ?? m; rl = new R5(rs); rl.on('error', () => {}); cycle = async () => { const l = await rl.acquire(['k'], 30000); await l.release(); }; }
else { rl = new Redlock(rs, { prefix: 'p' }); rl.on('error', () => {}); cycle = async () => { const l = await rl.lock('k').acquire(); await l.release(); }; }
for (let i = 0; i < 3000; i++) await cycle();
const c0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < CYCLES; i++) await cycle();
const c = process.cpuUsage(c0);
console.log('cpu/cycle µs', ((c.user + c.system) / CYCLES).toFixed(1), 'wall/cycle', ((performance.now() - t0) * 1000 / CYCLES).toFixed(1));
await rl.close?.(); rs.forEach((r) => r.disconnect());
process.exit(0);
