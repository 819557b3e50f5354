import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The suite runs against ioredis 5 and, with HOLDFAST_IOREDIS=6 (the second pass of `pnpm test`),
 * against ioredis 6: `ioredis` then resolves to the `ioredis6` alias package (npm:ioredis@6), in the
 * test workers (the alias below) and in every process they start (test/src/ioredis-6.mjs through
 * NODE_OPTIONS), and the `.test-d.ts` files are type-checked against ioredis 6's types.
 */
const ioredis6 = process.env.HOLDFAST_IOREDIS === '6';

/**
 * With HOLDFAST_CLIENT=node-redis (the third and fourth passes of `pnpm test`; HOLDFAST_NODE_REDIS=5|6
 * picks the major, 5 by default), the harness hands out clients holdfast runs on through node-redis (see
 * test/src/node-redis-twin.ts): the same suites, on the other client.
 */
const nodeRedisPass = process.env.HOLDFAST_CLIENT === 'node-redis';
const nodeRedis6 = nodeRedisPass && process.env.HOLDFAST_NODE_REDIS === '6';
const nodeRedis5 = nodeRedisPass && !nodeRedis6;

/**
 * With HOLDFAST_CLIENT=glide (the fifth pass of `pnpm test`), the harness hands out clients holdfast
 * runs on through Valkey GLIDE 2.x (`GlideClient`, `GlideClusterClient`; see test/src/glide-twin.ts).
 */
const glidePass = process.env.HOLDFAST_CLIENT === 'glide';

/**
 * What the per-client passes run (ioredis 6, node-redis 5, node-redis 6, GLIDE; the ioredis 5 pass runs
 * every file), chosen by name, so that a new file joins a pass by how it is named, not by a list:
 *
 * - `test/port/`: the port contract, in every pass;
 * - `*.client.test.ts`: an end-to-end file whose outcome depends on the client, in every pass;
 * - `*.ioredis.test.ts`: ioredis's own options and behaviour (`keyPrefix`, its resend after a
 *   reconnection), in the ioredis passes only (5 and 6), never on node-redis;
 * - `*.node-redis.test.ts`: in the node-redis passes only (the check that the pass runs node-redis);
 * - `*.glide.test.ts`: in the GLIDE pass only.
 *
 * Everything above the client port (packages/core/src/port/) behaves the same whichever client is
 * behind it, so the behaviour suites run once, in the ioredis 5 pass, and each client is held to
 * the port contract instead (test/port/: every operation of the port and every failure it must
 * translate), plus the end-to-end runs whose outcome depends on the client: the connection storms
 * and lost replies under load, the client's own connection handling (Cluster with no reachable
 * node, Sentinel, subscriber set-up, faults through the proxy), Redlock over fresh and mixed
 * clients, and ioredis's own options in the ioredis 6 pass. test/README.md ("Per-client passes")
 * lists, for every file that runs once, the contract tests that cover what a client could change
 * under it. HOLDFAST_ALL_PASSES=1 runs every file in every pass, as before.
 *
 * A name may carry several of these marks and `.slow` (below) in any order:
 * `name.client.slow.test.ts`.
 */
const TESTS = ['packages/*/test/**/', 'test/**/'];
const marked = (mark: string) => TESTS.map((dir) => `${dir}*.${mark}.*test.ts`);
export const PER_CLIENT = ['test/port/**/*.test.ts', ...marked('client')];
export const IOREDIS_ONLY = marked('ioredis');
export const NODE_REDIS_ONLY = marked('node-redis');
export const GLIDE_ONLY = marked('glide');
/**
 * The project's ports of Redisson's and the peer libraries' own tests (packages/core/test/ports/):
 * they run once on ioredis 5 and again in the GLIDE pass, whose client differs most from the others
 * (no resend, no connection events, its own request timeout, no `duplicate()`).
 */
export const PEER_SCENARIOS = ['packages/core/test/ports/**/*.test.ts'];
const allPasses = process.env.HOLDFAST_ALL_PASSES === '1';
const perClientPass = (ioredis6 || nodeRedisPass || glidePass) && !allPasses;

/** Where the pass writes its JSON report (`.json`) and its unhandled errors (`-unhandled.json`). */
const report = glidePass
  ? '.vitest-report-glide'
  : nodeRedisPass
    ? `.vitest-report-node-redis${nodeRedis6 ? '6' : ''}`
    : ioredis6
      ? '.vitest-report-ioredis6'
      : '.vitest-report';

/**
 * Skipped in the GLIDE pass besides RUN_ONCE and the other clients' own files: the Sentinel file
 * (GLIDE has no Sentinel client).
 */
export const NOT_ON_GLIDE = ['test/replication/sentinel.client.test.ts'];

/**
 * Run once, in the ioredis 5 pass, even with HOLDFAST_ALL_PASSES=1: tests that never talk to Redis
 * through the pass's client (pure logic, the spin model, tooling checks), tests that pick their
 * client themselves (iovalkey, ioredis 6's RESP3 options) and the consumer test (it installs the
 * ioredis that `npm install ioredis` gives, whatever the pass).
 */
export const RUN_ONCE = [
  'packages/cli/test/**',
  'packages/core/test/multi-lock/acquire-refused.test.ts',
  'packages/core/test/engine/renew-plan.test.ts',
  'packages/redlock/test/quorum.test.ts',
  'packages/watchdog/test/scheduler.test.ts',
  'test/chaos/checker.test.ts',
  'test/chaos/multi-lock-wait-model.test.ts',
  'test/clients/**',
  'test/consumer/consumer.test.ts',
  'test/docs/readme-comparison.test.ts',
  'test/docs/setup.slow.test.ts',
  'test/harness/redis-server-missing.test.ts',
  'test/model/**',
  'test/runtimes/**',
  // @holdfast/fence runs on the databases; its worker processes make their own ioredis clients.
  'packages/fence/test/**',
  'test/consumer/fence-consumer.test.ts',
];

/**
 * Skipped in the node-redis 5 pass: node-redis 5 itself can hand a reply to the wrong command, or
 * leave a command unanswered for good, when its connection dies while commands are on their way
 * (node-redis 6 reworked that socket handling). The mixed-faults storm kills, freezes and restarts
 * often enough to meet it (9 failed runs of 273 here), and so does the connection storms' proxy
 * storm, which resets connections and drops replies (a worker left waiting: 3 runs of 28, on this
 * code and on the code before it; 0 of 12 on node-redis 6). No library on top of the client can be
 * exact then: see "node-redis 5 under connection loss" in test/README.md for the measurements and
 * how to run them (HOLDFAST_NODE_REDIS5_STORM=1 keeps both files in this pass). Both files run in
 * the ioredis 5, ioredis 6 and node-redis 6 passes.
 */
export const NOT_ON_NODE_REDIS_5 = ['test/chaos/mixed-nemesis.client.test.ts', 'test/chaos/storms-connection.client.test.ts'];

/**
 * Skipped in the node-redis 6 pass besides RUN_ONCE and IOREDIS_ONLY: files in which holdfast never
 * runs on the pass's client, so the node-redis pass of the other major already gives their outcome.
 * The README snippets run holdfast on the client they are written for, in processes of their own;
 * the harness's own tests and pure logic run no holdfast over Redis. Every file that hands holdfast
 * a client from the harness, or starts processes that pick theirs from the pass (the chaos workers,
 * the examples), runs on both node-redis majors.
 */
export const NOT_ON_PASS_CLIENT = [
  'packages/core/test/model/reference-model.test.ts',
  'packages/core/test/semaphore/renew-plan.test.ts',
  'packages/otel/test/channel-names.test.ts',
  'test/chaos/multi-lock-checker.test.ts',
  'test/chaos/permit-checker.test.ts',
  'test/chaos/rw-checker.test.ts',
  'test/consumer/entries.test.ts',
  'test/docs/readme-snippets.test.ts',
  'test/harness/backend.test.ts',
  'test/harness/fault-proxy.test.ts',
  'test/harness/helpers.test.ts',
  'test/harness/redis-server.test.ts',
];

/**
 * Left out by `pnpm test:quick` (HOLDFAST_QUICK=1), the inner loop of a change, by folder or name:
 * the chaos runs, Cluster, replication and Sentinel set-ups, the packed-tarball consumer and
 * example runs, the client matrix, the spin model (their folders), and every `*.slow.test.ts`
 * (server-fault matrices, Redlock's and the watchdog's fault runs, multi-process runs, the
 * README's set-up in a scratch clone). Everything else runs, on one client.
 */
export const SLOW = [
  'test/chaos/**',
  'test/cluster/**',
  'test/replication/**',
  'test/consumer/**',
  'test/runtimes/**',
  'test/examples/**',
  'test/model/**',
  'test/clients/**',
  ...marked('slow'),
];
const quick = process.env.HOLDFAST_QUICK === '1';

const nodeOptions = [process.env.NODE_OPTIONS, `--import=${src('./test/src/ioredis-6.mjs')}`].filter(Boolean).join(' ');

export default defineConfig({
  plugins: [
    {
      // Lua scripts are imported as text, the same way the tsup build inlines them.
      name: 'holdfast-lua-text',
      transform(code, id) {
        if (!id.endsWith('.lua')) return undefined;
        return { code: `export default ${JSON.stringify(code)};`, map: null };
      },
    },
  ],
  resolve: {
    // Exact matches: a bare '@holdfast/core' alias would also rewrite
    // '@holdfast/core/internal' to '…/index.ts/internal'.
    alias: [
      { find: /^@holdfast\/core$/, replacement: src('./packages/core/src/index.ts') },
      { find: /^@holdfast\/core\/internal$/, replacement: src('./packages/core/src/internal.ts') },
      { find: /^@holdfast\/core\/keys$/, replacement: src('./packages/core/src/keys/public-keys.ts') },
      { find: /^@holdfast\/core\/workspace$/, replacement: src('./packages/core/src/workspace.ts') },
      { find: /^@holdfast\/watchdog$/, replacement: src('./packages/watchdog/src/index.ts') },
      { find: /^@holdfast\/redlock$/, replacement: src('./packages/redlock/src/index.ts') },
      { find: /^@holdfast\/cli$/, replacement: src('./packages/cli/src/index.ts') },
      { find: /^@holdfast\/otel$/, replacement: src('./packages/otel/src/index.ts') },
      { find: /^@holdfast\/test-utils$/, replacement: src('./test/src/index.ts') },
      { find: /^@holdfast\/test-utils\/ports$/, replacement: src('./test/src/ports.ts') },
      { find: /^@holdfast\/test-utils\/models$/, replacement: src('./test/src/models.ts') },
      { find: /^@holdfast\/test-utils\/databases$/, replacement: src('./test/src/databases.ts') },
      ...(ioredis6 ? [{ find: /^ioredis$/, replacement: createRequire(import.meta.url).resolve('ioredis6') }] : []),
    ],
  },
  test: {
    include: perClientPass
      ? [...PER_CLIENT, ...(glidePass ? [...GLIDE_ONLY, ...PEER_SCENARIOS] : nodeRedisPass ? NODE_REDIS_ONLY : IOREDIS_ONLY)]
      : TESTS.map((dir) => `${dir}*.test.ts`),
    exclude: [
      ...configDefaults.exclude,
      ...(ioredis6 || nodeRedisPass || glidePass ? RUN_ONCE : []),
      ...(quick ? SLOW : []),
      ...(nodeRedisPass || glidePass ? IOREDIS_ONLY : []),
      ...(nodeRedisPass ? [] : NODE_REDIS_ONLY),
      ...(glidePass ? NOT_ON_GLIDE : GLIDE_ONLY),
      ...(nodeRedis6 ? NOT_ON_PASS_CLIENT : []),
      ...(nodeRedis5 && process.env.HOLDFAST_NODE_REDIS5_STORM !== '1' ? NOT_ON_NODE_REDIS_5 : []),
    ],
    env: ioredis6 ? { NODE_OPTIONS: nodeOptions } : {},
    globalSetup: ['test/src/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three files at a time on two cores: most of a file's time is waiting (leases running out,
    // servers starting, processes it spawned), so one file per core left the cores idle; each
    // file has its own prefix and its own servers, and nothing asserts on speed.
    // HOLDFAST_TEST_WORKERS overrides it (1: one file at a time).
    maxWorkers: Number(process.env.HOLDFAST_TEST_WORKERS ?? 3),
    reporters: [
      'default',
      ['json', { outputFile: `${report}.json` }],
      // The run's unhandled errors, named again at the end of `pnpm test` (scripts/test.mjs).
      ['./scripts/unhandled-errors-reporter.mjs', { outputFile: `${report}-unhandled.json` }],
    ],
    typecheck: {
      // The type tests check node-redis's types in every pass (clients.test-d.ts): run them once.
      enabled: !nodeRedisPass && !glidePass,
      include: ['packages/*/test/**/*.test-d.ts'],
      tsconfig: ioredis6 ? './tsconfig.vitest-ioredis6.json' : './tsconfig.vitest.json',
    },
  },
});
