import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { sharedRedis, uniqueName } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * One Nest application in two real processes (test/worker.mjs, on the built package):
 * `@WithLock` excludes across them, re-enters within one, and each process ends by
 * itself after `app.close()`.
 */
interface Worker {
  readonly child: ChildProcess;
  /** Sends a command and, unless told otherwise, resolves with its answer. */
  send(command: string): Promise<Record<string, unknown>>;
  next(): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const workers: Worker[] = [];
afterEach(() => {
  for (const worker of workers.splice(0)) worker.child.kill('SIGKILL');
});

/** How much of a worker's stderr a failure quotes. */
const STDERR_TAIL = 4_000;

function start(url: string, prefix: string): Worker {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'worker.mjs'), url, prefix], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const answers: Record<string, unknown>[] = [];
  const waiting: { resolve: (answer: Record<string, unknown>) => void; reject: (error: Error) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const answer = JSON.parse(line) as Record<string, unknown>;
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(answer);
    else answers.push(answer);
  });
  // Piped rather than inherited so that a crash can be reported with its stderr; still shown as it comes.
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    process.stderr.write(chunk);
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  // A worker that died takes no command: its EPIPE must not become an uncaught error (next() reports the death).
  child.stdin!.on('error', () => undefined);
  // Set once the child is gone and every line it wrote has been read ('close' comes after stdout ended).
  let ended: Error | undefined;
  child.on('close', (code, signal) => {
    ended = new Error(`worker exited with code ${code}${signal ? ` (signal ${signal})` : ''} before answering; stderr tail:\n${stderr}`);
    for (const waiter of waiting.splice(0)) waiter.reject(ended);
  });
  const next = () => {
    if (answers.length > 0) return Promise.resolve(answers.shift()!);
    // An answer that can no longer come rejects, rather than waiting until the test times out.
    if (ended) return Promise.reject(ended);
    return new Promise<Record<string, unknown>>((resolve, reject) => waiting.push({ resolve, reject }));
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const worker = {
    child,
    next,
    exited,
    send: (command: string) => {
      child.stdin!.write(`${command}\n`);
      return next();
    },
  };
  workers.push(worker);
  return worker;
}

describe('a Nest application in two processes', () => {
  it('@WithLock excludes across processes, re-enters within one; both end by themselves after close', async () => {
    const { url } = await sharedRedis();
    const prefix = uniqueName('nest-procs');
    const a = start(url, prefix);
    const b = start(url, prefix);
    expect(await a.next()).toEqual({ ready: true });
    expect(await b.next()).toEqual({ ready: true });

    // A holds `shared`: B cannot take it within its 300 ms wait, and gets it once A is done.
    const held = (await a.send('hold')).held as number;
    expect(await b.send('attempt')).toEqual({ error: 'LockTimeoutError' });
    a.child.stdin!.write('release\n');
    const taken = (await b.send('attempt')).token as number;
    expect(taken).toBeGreaterThan(held);

    // Both processes at once, 20 sections each: never two inside.
    const [loopA, loopB] = await Promise.all([a.send('loop 20'), b.send('loop 20')]);
    expect(loopA).toEqual({ maxInside: 1 });
    expect(loopB).toEqual({ maxInside: 1 });

    // A method holding `shared` calls another `@WithLock('shared')` method: it re-enters.
    expect(await a.send('outer')).toEqual({ holdCounts: [1, 2] });

    a.child.stdin!.write('close\n');
    b.child.stdin!.write('close\n');
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
  });
});
