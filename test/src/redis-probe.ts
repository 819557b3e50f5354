import net from 'node:net';
import { open, stat } from 'node:fs/promises';

export interface ProbeResult {
  pid: number;
  version: string;
}

/**
 * One readiness attempt using raw RESP rather than ioredis: no reconnect
 * loop, no error events, nothing left behind. PING must answer +PONG (a
 * server still loading its AOF answers -LOADING) and INFO tells us the pid,
 * which proves we reached *our* child and not whoever else owns the port.
 */
export function probeRedis(host: string, port: number, timeoutMs = 500): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buffer = Buffer.alloc(0);
    let settled = false;
    const finish = (error: Error | undefined, result?: ProbeResult): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (error) reject(error);
      else if (result) resolve(result);
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`probe timed out after ${timeoutMs} ms`)));
    socket.on('error', (error) => finish(error));
    socket.on('close', () => finish(new Error('connection closed before a full reply')));
    socket.on('connect', () => socket.write('PING\r\nINFO server\r\n'));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const parsed = parseProbeReply(buffer);
      if (parsed instanceof Error) finish(parsed);
      else if (parsed) finish(undefined, parsed);
    });
  });
}

/** Returns undefined while the reply is still incomplete. */
function parseProbeReply(buffer: Buffer): ProbeResult | Error | undefined {
  const firstEnd = buffer.indexOf('\r\n');
  if (firstEnd < 0) return undefined;
  const first = buffer.subarray(0, firstEnd).toString();
  if (first !== '+PONG') return new Error(`PING answered ${JSON.stringify(first)}`);
  const headerEnd = buffer.indexOf('\r\n', firstEnd + 2);
  if (headerEnd < 0) return undefined;
  const header = buffer.subarray(firstEnd + 2, headerEnd).toString();
  if (!header.startsWith('$')) return new Error(`INFO answered ${JSON.stringify(header)}`);
  const length = Number(header.slice(1));
  const bodyStart = headerEnd + 2;
  if (buffer.length < bodyStart + length) return undefined;
  const info = buffer.subarray(bodyStart, bodyStart + length).toString();
  const pid = /^process_id:(\d+)/m.exec(info)?.[1];
  const version = /^redis_version:(\S+)/m.exec(info)?.[1];
  if (pid === undefined || version === undefined) return new Error('INFO server lacks process_id');
  return { pid: Number(pid), version };
}

/**
 * Log written since `fromOffset` (the file is appended to across restarts, so
 * an old "Address already in use" must not be mistaken for a new one), capped
 * to the last `maxBytes`. Never throws: it only decorates error messages.
 */
export async function readLog(path: string, fromOffset = 0, maxBytes = 4096): Promise<string> {
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const start = Math.max(fromOffset, size - maxBytes);
      if (start >= size) return '';
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      return buffer.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}

/** Current size of a file, 0 when it does not exist yet. */
export async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
