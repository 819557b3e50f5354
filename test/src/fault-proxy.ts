import net from 'node:net';
import type { Server, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { releasePort, reservePort } from './ports.js';

export interface ProxyTarget {
  host: string;
  port: number;
}

interface FaultState {
  latencyMs: number;
  blackholed: boolean;
}

const ignore = (): void => {};

function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * One direction of one proxied connection. Delayed chunks wait in a FIFO so
 * latency never reorders bytes (RESP would be corrupted otherwise), and a
 * lowered latency cannot overtake chunks already in flight.
 */
class Lane {
  private queue: { chunk: Buffer; dueAt: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastDueAt = 0;
  private sourceEnded = false;

  constructor(
    private readonly faults: FaultState,
    private readonly to: Socket,
  ) {}

  push(chunk: Buffer): void {
    const latency = this.faults.latencyMs;
    if (latency <= 0 && this.queue.length === 0) {
      this.deliver(chunk);
      return;
    }
    const dueAt = Math.max(performance.now() + latency, this.lastDueAt);
    this.lastDueAt = dueAt;
    this.queue.push({ chunk, dueAt });
    this.schedule();
  }

  /** The source half-closed: pass the FIN on once queued bytes are out. */
  end(): void {
    this.sourceEnded = true;
    if (this.queue.length === 0 && !this.to.destroyed) this.to.end();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
  }

  private schedule(): void {
    const head = this.queue[0];
    if (this.timer || !head) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.release();
    }, Math.max(0, head.dueAt - performance.now()));
  }

  private release(): void {
    const now = performance.now();
    for (let head = this.queue[0]; head && head.dueAt <= now; head = this.queue[0]) {
      this.queue.shift();
      this.deliver(head.chunk);
    }
    if (this.queue.length === 0 && this.sourceEnded && !this.to.destroyed) this.to.end();
    this.schedule();
  }

  private deliver(chunk: Buffer): void {
    // Decided at delivery time, like a partition that also eats in-flight packets.
    if (this.faults.blackholed || this.to.destroyed) return;
    this.to.write(chunk);
  }
}

class Connection {
  readonly up: Lane;
  readonly down: Lane;

  constructor(
    readonly client: Socket,
    readonly upstream: Socket,
    faults: FaultState,
  ) {
    this.up = new Lane(faults, upstream);
    this.down = new Lane(faults, client);
  }

  destroy(reset: boolean): void {
    this.up.dispose();
    this.down.dispose();
    if (reset && typeof this.client.resetAndDestroy === 'function') {
      try {
        // RST instead of FIN: the client sees ECONNRESET, like a crashed peer.
        this.client.resetAndDestroy();
      } catch {
        this.client.destroy();
      }
    } else {
      this.client.destroy();
    }
    this.upstream.destroy();
  }

  get closed(): boolean {
    return this.client.destroyed && this.upstream.destroyed;
  }
}

/**
 * Loopback TCP proxy placed between a client and Redis to inject network
 * faults deterministically (latency, partitions, resets, lost replies)
 * without root, iptables or tc.
 */
export class FaultProxy {
  readonly host = '127.0.0.1';
  // Shared by reference with every Lane so a change applies to live connections.
  private readonly faults: FaultState = { latencyMs: 0, blackholed: false };
  private refusing = false;
  private closing: Promise<void> | undefined;
  private readonly live = new Set<Connection>();
  private readonly dropWaiters: { readonly matches: ((reply: Buffer) => boolean) | undefined; readonly resolve: () => void }[] = [];

  private constructor(
    private readonly server: Server,
    private readonly target: ProxyTarget,
    readonly port: number,
  ) {
    server.on('connection', (socket) => this.accept(socket));
    server.on('error', ignore);
  }

  /**
   * Listens on a reserved port (see ports.ts): clients of a proxy keep reconnecting to it after a
   * fault, and a port of the ephemeral range could meanwhile be another connection's, or theirs.
   */
  static async start(target: ProxyTarget): Promise<FaultProxy> {
    for (let attempt = 1; ; attempt++) {
      const port = await reservePort();
      try {
        const server = await listenOn(port);
        return new FaultProxy(server, { host: target.host, port: target.port }, port);
      } catch (error) {
        releasePort(port);
        // Bound by someone else between the reservation's check and this listen: another port.
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw error;
      }
    }
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  /** Live client-side connections. */
  get connections(): number {
    let count = 0;
    for (const conn of this.live) if (!conn.client.destroyed) count++;
    return count;
  }

  setLatency(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`invalid latency ${ms}`);
    this.faults.latencyMs = ms;
  }

  blackhole(on: boolean): void {
    this.faults.blackholed = on;
  }

  refuse(on: boolean): void {
    this.refusing = on;
  }

  resetAll(): void {
    for (const conn of this.live) conn.destroy(true);
    this.live.clear();
  }

  /**
   * Arms one drop: the next server->client chunk is discarded and its
   * connection closed, so the command ran on Redis but the client never
   * learned it. Each call arms one more drop. `matches`: only a chunk it
   * accepts is dropped (a client may keep another connection through the
   * proxy, whose traffic must not take the drop meant for a command's reply).
   */
  dropNextReply(matches?: (reply: Buffer) => boolean): Promise<void> {
    return new Promise((resolve) => this.dropWaiters.push({ matches, resolve }));
  }

  /** Pending dropNextReply() promises stay pending: there is nothing to report. */
  close(): Promise<void> {
    this.closing ??= new Promise((resolve) => {
      this.dropWaiters.length = 0;
      this.server.close(() => {
        releasePort(this.port);
        resolve();
      });
      for (const conn of this.live) conn.destroy(false);
      this.live.clear();
    });
    return this.closing;
  }

  private accept(client: Socket): void {
    client.on('error', ignore);
    if (this.refusing || this.closing) {
      client.destroy();
      return;
    }
    // Writes before 'connect' are buffered by net.Socket, so nothing is lost
    // while the upstream leg is still being established.
    const upstream = net.connect({ host: this.target.host, port: this.target.port });
    upstream.on('error', ignore);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const conn = new Connection(client, upstream, this.faults);
    this.live.add(conn);

    client.on('data', (chunk: Buffer) => conn.up.push(chunk));
    upstream.on('data', (chunk: Buffer) => {
      const index = this.dropWaiters.findIndex((waiter) => waiter.matches === undefined || waiter.matches(chunk));
      if (index >= 0) {
        const [dropped] = this.dropWaiters.splice(index, 1);
        conn.destroy(false);
        this.live.delete(conn);
        dropped!.resolve();
        return;
      }
      conn.down.push(chunk);
    });
    client.on('end', () => conn.up.end());
    upstream.on('end', () => conn.down.end());

    const onClose = (hadError: boolean): void => {
      // An abrupt close on one side (reset, refused upstream) tears down the
      // other; a graceful one was already forwarded via the lanes' end().
      if (hadError) conn.destroy(false);
      if (conn.closed) {
        conn.up.dispose();
        conn.down.dispose();
        this.live.delete(conn);
      }
    };
    client.on('close', onClose);
    upstream.on('close', onClose);
  }
}
