// Gives each example a Redis: REDIS_URL when set (checked first, so a wrong URL fails at once
// with a message instead of hanging on retries), otherwise a redis-server process of its own on
// a free loopback port, stopped when the example ends. Every failure to get a Redis exits with
// status 1 and one line that says what to do.
//
// And the client the examples hand holdfast, made in connect(): an ioredis client, as a
// newcomer's application has, or, when HOLDFAST_CLIENT=node-redis is set (the test suite's
// node-redis pass, see test/README.md), a connected node-redis client of the pass's major
// (HOLDFAST_NODE_REDIS=5|6), made by the factory the suite's own clients come from. This file is
// the one place that decides; the server checks below speak RESP over a socket, so a process
// loads no client library but the one its example runs on.
import { spawn } from 'node:child_process';
import { connect as tcpConnect, createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

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
  // PINGs until the server answers; stops trying whatever happens.
  let waiting = true;
  const answered = (async () => {
    while (waiting) {
      if (await ping({ host: HOST, port }, 1_000).then(() => true, () => false)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    await Promise.race([answered, failed]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    waiting = false;
    clearTimeout(timer);
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

/**
 * Sends PING over a fresh connection (TLS for rediss://) and resolves with the reply's first
 * line. Any RESP reply counts: an error (NOAUTH, say) still means a Redis answered, and
 * credentials are the example's client's business. Rejects on a connection error, a close
 * before a reply, or no reply within `timeoutMs`.
 */
function ping({ host, port, tls = false }, timeoutMs) {
  return new Promise((resolve, reject) => {
    const socket = tls ? tlsConnect({ host, port, servername: host }) : tcpConnect({ host, port });
    let reply = '';
    const done = (error, line) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(line);
    };
    const timer = setTimeout(() => done(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.once(tls ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      const end = reply.indexOf('\r\n');
      if (end === -1) return;
      const line = reply.slice(0, end);
      done(/^[+-]/.test(line) ? undefined : new Error(`not a Redis: it answered ${JSON.stringify(line.slice(0, 40))}`), line);
    });
    socket.once('error', (error) => done(error));
    socket.once('close', () => done(new Error('connection closed before a reply')));
  });
}

/** Fails the example at once, with what to do, when nothing answers PING at `url`. */
export async function checkReachable(url) {
  try {
    const { hostname, port, protocol } = new URL(url);
    await ping({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) || 6379, tls: protocol === 'rediss:' }, CONNECT_TIMEOUT_MS);
  } catch (error) {
    fail(
      `cannot reach Redis at REDIS_URL=${url} (${error.message}): start a Redis there, ` +
        'or unset REDIS_URL and the example starts its own redis-server',
    );
  }
}

/** The client library connect() makes clients of: see the top of this file. */
export const clientLibrary = process.env.HOLDFAST_CLIENT === 'node-redis' ? 'node-redis' : 'ioredis';

/**
 * The example's Redis client, at `url`, with ioredis `options`: `new Redis(url, options)`. In the
 * node-redis pass, a connected node-redis client instead, with the options node-redis has
 * (`retryStrategy`, `connectTimeout`, `enableOfflineQueue`...) translated. Either way the example
 * uses it as its own (holdfast never closes it) and closes it when done.
 */
export async function connect(url, options = {}) {
  if (clientLibrary === 'ioredis') {
    const { Redis } = await import('ioredis');
    return new Redis(url, options);
  }
  const { createNodeRedisClient } = await import('../../test/src/node-redis-client.mjs');
  const client = createNodeRedisClient(url, options);
  // ioredis reports an 'error' nobody listens to on stderr; node-redis would throw it instead.
  client.on('error', (error) => {
    if (client.listenerCount('error') === 1) console.error(`[node-redis] ${error.message}`);
  });
  return client.connect();
}

/** LLEN of `key` (a holdfast queue, say) through either library: ioredis `llen`, node-redis `lLen`. */
export function listLength(redis, key) {
  return clientLibrary === 'ioredis' ? redis.llen(key) : redis.lLen(key);
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
