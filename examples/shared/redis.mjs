// Gives each example a Redis: REDIS_URL when set (checked first, so a wrong URL fails at once
// with a message instead of hanging on retries), otherwise a redis-server process of its own on
// a free loopback port, stopped when the example ends. Every failure to get a Redis exits with
// status 1 and one line that says what to do.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

const HOST = '127.0.0.1';
// REDIS_SERVER_BIN overrides the binary, as in the test harness.
const REDIS_SERVER = process.env.REDIS_SERVER_BIN || 'redis-server';
const START_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 5_000;
export const NOT_FOUND =
  'redis-server was not found on the PATH: install it (Debian: apt-get install redis-server) or set REDIS_URL';

// Never leave a redis-server behind, whatever ends the example (fail() exits at once).
const children = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Prints the reason on stderr and ends the example with status 1. */
export function fail(message) {
  console.error(message);
  process.exit(1);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a redis-server; returns { url, port, pause(), resume(), stop() }. Rejects with a
 * readable message when the binary is missing, exits at start, or does not answer in time.
 */
export async function startRedisServer() {
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  children.add(child);
  const exited = new Promise((resolve) => child.once('exit', resolve)).then(() => children.delete(child));
  // Settles only with a failure: a spawn error, an exit during start, or the start deadline.
  let timer;
  const failed = new Promise((_, reject) => {
    child.once('error', (error) => {
      children.delete(child);
      reject(new Error(error.code === 'ENOENT' ? `${NOT_FOUND} (tried \`${REDIS_SERVER}\`)` : `could not start redis-server: ${error.message}`));
    });
    child.once('exit', (code, signal) => reject(new Error(`redis-server on port ${port} exited during start (${code ?? signal})`)));
    timer = setTimeout(
      () => reject(new Error(`redis-server on port ${port} did not answer within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
  });
  // Retries connecting until the server listens; disconnected whatever happens.
  const probe = new Redis({ port, host: HOST, lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
  probe.on('error', () => undefined);
  probe.connect().catch(() => undefined);
  try {
    await Promise.race([probe.ping(), failed]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
    probe.disconnect();
    failed.catch(() => undefined);
  }
  return {
    url: `redis://${HOST}:${port}`,
    port,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: async () => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Fails the example at once, with what to do, when nothing answers PING at `url`. */
export async function checkReachable(url) {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  // connect() rejects with "Connection is closed."; the cause (ECONNREFUSED…) comes as an event.
  let cause;
  probe.on('error', (error) => (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    fail(
      `cannot reach Redis at REDIS_URL=${url} (${(cause ?? error).message}): start a Redis there, ` +
        'or unset REDIS_URL and the example starts its own redis-server',
    );
  } finally {
    probe.disconnect();
  }
}

/** Runs `main(url, server)` against REDIS_URL (server undefined) or a server of its own. */
export async function withRedis(main) {
  if (process.env.REDIS_URL) {
    await checkReachable(process.env.REDIS_URL);
    await main(process.env.REDIS_URL, undefined);
    return;
  }
  const server = await startRedisServer().catch((error) => fail(error.message));
  try {
    await main(server.url, server);
  } finally {
    await server.stop();
  }
}

/** Prints every lifecycle event of a LockClient (or Redlock), one line each. */
export function printEvents(emitter, label = 'locks') {
  for (const event of ['acquired', 'released', 'extended', 'lost']) {
    emitter.on(event, (e) => {
      const { error, ...rest } = e;
      console.log(`  [${label}] ${event.padEnd(8)} ${JSON.stringify(rest)}`);
    });
  }
  emitter.on('error', (error) => console.log(`  [${label}] error    ${error.message}`));
}
