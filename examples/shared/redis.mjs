// Gives each example a Redis: REDIS_URL when set, otherwise a redis-server
// process of its own on a free loopback port, stopped when the example ends.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a redis-server; returns { url, pause(), resume(), stop() }. */
export async function startRedisServer() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('error', (error) => {
    console.error(`could not start redis-server (${error.message}); set REDIS_URL instead`);
    process.exit(1);
  });
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
  probe.on('error', () => undefined);
  await probe.connect().catch(() => undefined);
  await probe.ping();
  probe.disconnect();
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: async () => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs `main(url)` against REDIS_URL or a server of its own. */
export async function withRedis(main) {
  if (process.env.REDIS_URL) {
    await main(process.env.REDIS_URL, undefined);
    return;
  }
  const server = await startRedisServer();
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
