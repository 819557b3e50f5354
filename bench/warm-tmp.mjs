import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
const req = createRequire(import.meta.url);
const Redis = req('ioredis');
const { Redlock } = await import(process.env.RL ?? '/work/main/packages/redlock/dist/index.js');
const N = Number(process.env.N ?? 3);
const ports = [7441, 7442, 7443, 7444, 7445].slice(0, N);
const rs = await Promise.all(ports.map(async (p) => { const r = new Redis(p, '127.0.0.1'); await new Promise((res) => r.once('ready', res)); return r; }));
let cycle, rl;
if (process.env.LIB === 'rl5') { const m = req('redlock'); const R5 = m.default ?? m; rl = new R5(rs); rl.on('error', () => {}); cycle = async () => { const l = await rl.acquire(['k'], 30000); await l.release(); }; }
else { rl = new Redlock(rs, { prefix: 'p' + Math.random() }); rl.on('error', () => {}); cycle = async () => { const l = await rl.lock('k').acquire(); await l.release(); }; }
const out = [];
for (let b = 0; b < 20; b++) { const c0 = process.cpuUsage(); for (let i = 0; i < 100; i++) await cycle(); const c = process.cpuUsage(c0); out.push(((c.user + c.system) / 100).toFixed(0)); }
console.log((process.env.LIB ?? 'holdfast').padEnd(9), out.join(' '));
await rl.close?.(); rs.forEach((r) => r.disconnect()); process.exit(0);
