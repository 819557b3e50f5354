// A candidate process of the election tests: campaigns, leads for a while
// (a `lead` line each time it checked `term.isLeader` and found it true, so a
// line is a moment it believed it led), resigns, and campaigns again, until a
// line arrives on stdin; then it gives up its campaign and exits. Every event
// is one JSON line on stdout, stamped with process.hrtime.bigint() (one
// monotonic clock for every process on the machine).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockClient } from '../../dist/index.js';

const { proc, url, prefix, name, termMs, holdMs } = JSON.parse(process.argv[2]);

function record(type, fields = {}) {
  process.stdout.write(`${JSON.stringify({ ...fields, t: process.hrtime.bigint().toString(), proc, type })}\n`);
}

const redis = new Redis(url, { maxRetriesPerRequest: null });
redis.on('error', () => {});
const locks = new LockClient(redis, { prefix, commandTimeoutMs: 200, handoffTimeoutMs: 200 });
locks.on('error', () => {});
const election = locks.election(name, { termMs });
const stop = new AbortController();
process.stdin.on('data', () => stop.abort(new Error('stopping')));

while (!stop.signal.aborted) {
  record('campaign');
  let term;
  try {
    term = await election.campaign({ value: proc, signal: stop.signal });
  } catch (error) {
    record('gave-up', { code: error.code ?? error.message });
    continue;
  }
  const epoch = term.epoch;
  record('elected', { epoch, value: term.value });
  // Reading the signal past the term's deadline (after a freeze) reports the loss at once.
  const { signal } = term;
  const onLost = () => record('lost', { epoch, code: signal.reason?.code });
  if (signal.aborted) onLost();
  else signal.addEventListener('abort', onLost);
  const until = performance.now() + holdMs;
  while (performance.now() < until && !stop.signal.aborted && term.isLeader) {
    record('lead', { epoch });
    await sleep(10);
  }
  // Resign; a failure keeps the term (still renewed), so try again while leading.
  while (term.isLeader) {
    try {
      await term.resign();
      record('resigned', { epoch });
    } catch (error) {
      record('resign-failed', { epoch, code: error.code });
      if (term.isLeader) record('lead', { epoch });
      await sleep(20);
    }
  }
}
await locks.close();
redis.disconnect();
record('exit');
