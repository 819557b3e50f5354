import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { liveServers } from './redis-process.js';

// Ports for the servers and fault proxies the harness starts, and for "nothing listens here",
// are taken outside the kernel's ephemeral range. A port from that range (what `listen(0)` hands
// out) is also what every outgoing connection on the machine binds as its source port: a killed
// server's port can be taken by any client's connection before restart() binds it again, and a
// client reconnecting to a dead port of that range can even connect to itself (TCP simultaneous
// open) and hold it. Cluster nodes also bind port + 10000 (the bus), so both stay below the range.
//
// Test files run in parallel worker processes: a port is reserved for this process by a file
// created exclusively (holding the pid) before it is checked for binding, and freed on stop or
// at exit. A reservation whose process is gone is taken over.

const BUS_OFFSET = 10_000;
const SPAN = 9_000; // < BUS_OFFSET: no port is another's bus port
const ATTEMPTS = 200;
/** Where the reservation files are: one per port, holding the owner's pid. */
export const PORTS_DIR = path.join(os.tmpdir(), 'holdfast-test-ports');

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux: the IANA dynamic range, what macOS and Windows use
  }
  return [49_152, 65_535];
}

/** The candidates: below the ephemeral range with their bus ports, else above it; undefined if neither fits. */
export function reservablePorts(): [number, number] | undefined {
  const [low, high] = ephemeralRange();
  const below = low - 1 - BUS_OFFSET;
  if (below - 1_024 >= 1_000) return [Math.max(1_025, below - SPAN), below];
  const above = 65_535 - BUS_OFFSET;
  if (above - high >= 1_000) return [high + 1, Math.min(above, high + 1 + SPAN)];
  return undefined;
}

const held = new Set<number>();
let releaseAtExit = false;

function fileOf(port: number): string {
  return path.join(PORTS_DIR, String(port));
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function ownerOf(port: number): number | undefined {
  try {
    const pid = Number(readFileSync(fileOf(port), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Rewrites a reservation whose process is gone to this one, under a lock file so two processes
 * cannot both take the same one over (a lock older than a few seconds was left by a process
 * that died holding it).
 */
function takeOver(port: number, stale: number | undefined): boolean {
  const lock = path.join(PORTS_DIR, 'takeover.lock');
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
  } catch {
    try {
      if (ageMs(lock) > 5_000) unlinkSync(lock);
    } catch {
      // released in between
    }
    return false;
  }
  try {
    // The file is never absent during a takeover, so a concurrent exclusive create still fails.
    if (ownerOf(port) !== stale) return false;
    writeFileSync(fileOf(port), String(process.pid));
    return true;
  } finally {
    unlinkSync(lock);
  }
}

/**
 * Reserves `port` for this process by creating its file; false when a live process (this one
 * included) holds it. A reservation left by a process that is gone is taken over.
 */
export function claimPort(port: number): boolean {
  mkdirSync(PORTS_DIR, { recursive: true });
  let claimed = false;
  try {
    writeFileSync(fileOf(port), String(process.pid), { flag: 'wx' });
    claimed = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const owner = ownerOf(port);
    // No pid yet is a claim being written, unless it has been so for seconds.
    const gone = owner === undefined ? ageMs(fileOf(port)) > 5_000 : !isAlive(owner);
    if (gone) claimed = takeOver(port, owner);
  }
  if (!claimed) return false;
  held.add(port);
  if (!releaseAtExit) {
    // With the servers: released at exit and on the signals that end a test worker.
    releaseAtExit = true;
    liveServers().add({ destroySync: () => [...held].forEach(releasePort) });
  }
  return true;
}

function bindable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** Frees a port reserved by {@link reservePort}. Synchronous so exit hooks can call it. */
export function releasePort(port: number): void {
  if (!held.delete(port)) return;
  try {
    unlinkSync(fileOf(port));
  } catch {
    // already gone
  }
}

/**
 * A loopback port outside the ephemeral range that this process alone holds until
 * {@link releasePort} (or exit), free to bind now together with its cluster bus port.
 */
export async function reservePort(host = '127.0.0.1'): Promise<number> {
  const range = reservablePorts();
  if (!range) throw new Error('reservePort: no room outside the ephemeral port range on this machine');
  const [from, to] = range;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (held.has(port) || !claimPort(port)) continue;
    if ((await bindable(host, port)) && (await bindable(host, port + BUS_OFFSET))) return port;
    releasePort(port);
  }
  throw new Error(`reservePort: no free port in ${from}–${to} after ${ATTEMPTS} tries`);
}
