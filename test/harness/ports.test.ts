import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimPort, PORTS_DIR, releasePort, reservablePorts, reservePort } from '../src/ports.js';

function ephemeral(): [number, number] {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return [low!, high!];
}

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** A pid of a process that has ended (spawned and waited for). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

const taken: number[] = [];
afterEach(() => taken.splice(0).forEach(releasePort));

describe('reservePort', () => {
  it('hands out distinct ports outside the ephemeral range, bus port included, free to bind', async () => {
    const [low, high] = ephemeral();
    for (let i = 0; i < 30; i++) taken.push(await reservePort());
    expect(new Set(taken).size).toBe(taken.length);
    for (const port of taken) {
      expect(port < low || port > high).toBe(true);
      expect(port + 10_000 < low || port > high).toBe(true);
      expect(readFileSync(path.join(PORTS_DIR, String(port)), 'utf8')).toBe(String(process.pid));
    }
    const server = await listen(taken[0]!);
    await new Promise((resolve) => server.close(resolve));
  });

  it('stays within reservablePorts()', async () => {
    const [from, to] = reservablePorts()!;
    const port = await reservePort();
    taken.push(port);
    expect(port).toBeGreaterThanOrEqual(from);
    expect(port).toBeLessThanOrEqual(to);
  });
});

describe('claimPort', () => {
  it('refuses a port this process or another live one holds, and takes it over once that one ended', async () => {
    const port = await reservePort();
    taken.push(port);
    expect(claimPort(port)).toBe(false);
    // The reservation is rewritten in place (never released, so no other worker can claim it meanwhile).
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      writeFileSync(path.join(PORTS_DIR, String(port)), String(other.pid));
      expect(claimPort(port)).toBe(false);
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
    expect(claimPort(port)).toBe(true);
    expect(readFileSync(path.join(PORTS_DIR, String(port)), 'utf8')).toBe(String(process.pid));
  });

  it('takes over a reservation left by an ended process', async () => {
    const port = await reservePort();
    taken.push(port);
    writeFileSync(path.join(PORTS_DIR, String(port)), String(await deadPid()));
    expect(claimPort(port)).toBe(true);
    expect(readFileSync(path.join(PORTS_DIR, String(port)), 'utf8')).toBe(String(process.pid));
  });
});
