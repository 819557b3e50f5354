/** What holdfast's diagnostics_channel telemetry costs an acquire + release cycle, in one run. */
import { channel, tracingChannel } from 'node:diagnostics_channel';
import { LockClient, TELEMETRY_CHANNELS } from '@holdfast/core';
import { instrumentHoldfast } from '@holdfast/otel';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { connect, RedisServer } from './processes.js';
import { median } from './stats.js';

const ROUNDS = 15;
const CYCLES = 400;
const CHECKS = 10_000_000;
const HELD = 5_000;

type Setup = { label: string; enable(): () => void };

const noop = () => undefined;
const tracing = ['acquire', 'release', 'extend', 'renewal'] as const;
const setups: Setup[] = [
  { label: 'no subscriber', enable: () => noop },
  {
    label: 'no-op subscriber',
    enable() {
      const handlers = { start: noop, end: noop, asyncStart: noop, asyncEnd: noop, error: noop };
      for (const name of tracing) tracingChannel(TELEMETRY_CHANNELS[name]).subscribe(handlers);
      channel(TELEMETRY_CHANNELS.lost).subscribe(noop);
      return () => {
        for (const name of tracing) tracingChannel(TELEMETRY_CHANNELS[name]).unsubscribe(handlers);
        channel(TELEMETRY_CHANNELS.lost).unsubscribe(noop);
      };
    },
  },
  {
    label: '@holdfast/otel (SDK metrics + spans)',
    enable() {
      const instrumentation = instrumentHoldfast({ meterProvider: new MeterProvider(), tracerProvider: new BasicTracerProvider() });
      return () => instrumentation.disable();
    },
  },
];

/** The check core's publish points make (telemetry.ts `listened`): a subscriber on any of the five channels. */
function checkCostNs(): number {
  const { start, end, asyncStart, asyncEnd, error } = tracingChannel(TELEMETRY_CHANNELS.acquire);
  let seen = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < CHECKS; i++) {
    if (start.hasSubscribers || end.hasSubscribers || asyncStart.hasSubscribers || asyncEnd.hasSubscribers || error.hasSubscribers) seen++;
  }
  const ns = Number(process.hrtime.bigint() - started) / CHECKS;
  if (seen !== 0) throw new Error('a subscriber was left on holdfast:acquire');
  return ns;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc (pnpm --filter @holdfast/bench bench:telemetry does)');

/** Heap bytes per held lock: HELD distinct locks acquired and kept, heap measured around them. */
async function heldBytes(locks: LockClient, tag: string): Promise<number> {
  const names = Array.from({ length: HELD }, (_, i) => `held-${tag}-${i}`);
  const handles = names.map((name) => locks.lock(name));
  gc!();
  const before = process.memoryUsage().heapUsed;
  const leases = [];
  for (const lock of handles) leases.push(await lock.acquire({ leaseMs: 60_000 }));
  gc!();
  const after = process.memoryUsage().heapUsed;
  for (const lease of leases) await lease.release();
  return (after - before) / HELD;
}

const server = await RedisServer.start();
const redis = connect(server.port);
try {
  const locks = new LockClient(redis, { prefix: 'bench-telemetry', name: 'bench' });
  const lock = locks.lock('cycle');
  const cycle = async () => {
    const lease = await lock.acquire();
    await lease.release();
  };
  for (let i = 0; i < 500; i++) await cycle(); // warm-up: JIT, script cache, registration

  const perCycle = setups.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, setup] of setups.entries()) {
      const disable = setup.enable();
      const started = performance.now();
      for (let c = 0; c < CYCLES; c++) await cycle();
      perCycle[i]!.push(((performance.now() - started) * 1_000) / CYCLES);
      disable();
    }
  }
  const check = checkCostNs();
  const base = median(perCycle[0]!);
  console.log(`acquire + release, ${ROUNDS} interleaved rounds of ${CYCLES} cycles, median µs per cycle:`);
  for (const [i, setup] of setups.entries()) {
    const us = median(perCycle[i]!);
    console.log(`  ${setup.label.padEnd(40)} ${us.toFixed(1).padStart(7)} µs   ratio ${(us / base).toFixed(3)}`);
  }
  console.log(
    `no-subscriber check (five hasSubscribers reads): ${check.toFixed(2)} ns, 2 per cycle (acquire, release): ` +
      `${(((2 * check) / 1_000 / base) * 100).toFixed(4)} % of a cycle`,
  );
  // Interleaved twice each, the lower of each kept (a GC's leftovers only add).
  const bare = [] as number[];
  const observed = [] as number[];
  for (let round = 0; round < 2; round++) {
    bare.push(await heldBytes(locks, `bare${round}`));
    const disable = setups[1]!.enable();
    observed.push(await heldBytes(locks, `observed${round}`));
    disable();
  }
  const bareB = Math.min(...bare);
  const observedB = Math.min(...observed);
  console.log(
    `JS heap per held lock (${HELD} held, lease + hold): no subscriber ${bareB.toFixed(0)} B, ` +
      `no-op subscriber ${observedB.toFixed(0)} B (+${(observedB - bareB).toFixed(0)} B: the grant record)`,
  );
  const key = `bench-telemetry:client:${locks.id}`;
  console.log(`client registration: ${await redis.get(key)}: ${await redis.call('MEMORY', 'USAGE', key)} bytes (one per client, none per lock)`);
  await locks.close();
} finally {
  redis.disconnect();
  await server.stop();
}
