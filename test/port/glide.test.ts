import { LockClient, type Lease } from '@holdfast/core';
import { startRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis, RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passFlavour } from './client-differences.js';
import { describePortContract } from './contract.js';
import { glideConfig, glideStandIn, probeOf } from './glide-client.js';

/**
 * The port contract on Valkey GLIDE 2.x (`GlideClient`), over one standalone server for the whole
 * file (killed and restarted by the fault tests, which run last). Each difference from the other
 * clients is a row of client-differences.ts. Its outcome does not depend on the pass's client, so
 * its body runs in the ioredis 5 pass only; the other passes check that they are not that pass.
 */
const once = passFlavour === 'ioredis-5';
let server: RedisServer;
let admin: Redis;
const opened: (() => void)[] = [];

if (once) {
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
  });

  afterAll(async () => {
    for (const close of opened.splice(0)) close();
    await server?.stop();
  });

  describePortContract('Valkey GLIDE 2.5', {
    flavour: 'glide',
    server: () => server,
    admin: () => admin,
    client: (options?: RedisOptions) => glideStandIn(glideConfig(server, options), false, opened),
  });

  // End to end on GLIDE: a waiter woken by the holder's release. A standalone GLIDE client has no
  // sharded pub/sub: the waiter's SSUBSCRIBE is refused as an unknown command, Waiters switches
  // to classic pub/sub, and the scripts PUBLISH.
  describe('locks over GLIDE', () => {
    it('a waiter on another GLIDE client gets the lock when the holder releases it (classic pub/sub)', async () => {
      const [a, b] = [glideStandIn(glideConfig(server), false, opened), glideStandIn(glideConfig(server), false, opened)];
      const [holders, waiters] = [new LockClient(a), new LockClient(b)];
      const name = uniqueName('glide:handoff');
      try {
        const held = await holders.lock(name).acquire({ waitMs: 5_000 });
        const waiting = waiters.lock(name).acquire({ waitMs: 20_000 });
        const channels = async () => (await admin.call('PUBSUB', 'CHANNELS', '*')) as string[];
        await waitFor(async () => (await channels()).some((channel) => channel.includes(name)), { message: 'the waiter never subscribed' });
        await held.release();
        const lease = await waiting;
        expect(lease.holdCount).toBe(1);
        await lease.release();
      } finally {
        await holders.close();
        await waiters.close();
      }
    });
  });

  /**
   * GLIDE fails a request at its own `requestTimeout` (250 ms by default, 100 here), before
   * holdfast's `commandTimeoutMs`, and the request may still run at the server afterwards: core
   * retries it (RedisTimeoutError is transient), so a frozen server receives the same acquire or
   * release several times and runs them all once it resumes. Each attempt carries the call's
   * request id, which makes a repeated acquire a no-op and a repeated release harmless.
   */
  describe('GLIDE requestTimeout under commandTimeoutMs: requests GLIDE gave up on that still ran', () => {
    const frozenUntilGlideTimesOut = async (client: object, run: () => Promise<unknown>) => {
      const probe = probeOf(client);
      const before = probe.rejections.filter((e) => e.constructor.name === 'TimeoutError').length;
      server.pause();
      const running = run();
      running.catch(() => undefined);
      try {
        await waitFor(() => probe.rejections.filter((e) => e.constructor.name === 'TimeoutError').length >= before + 2, {
          timeoutMs: 10_000,
          message: 'GLIDE gave up on no request',
        });
      } finally {
        server.resume();
      }
      return running;
    };

    it('an acquire GLIDE gave up on, resent and run late: one hold (one release frees the lock)', async () => {
      const glide = glideStandIn(glideConfig(server, { requestTimeout: 100 }), false, opened);
      await (glide as unknown as { customCommand(a: string[]): Promise<unknown> }).customCommand(['PING']);
      const locks = new LockClient(glide, { commandTimeoutMs: 3_000 });
      const others = new LockClient(admin);
      const name = uniqueName('glide:late-acquire');
      try {
        const lease = (await frozenUntilGlideTimesOut(glide, () => locks.lock(name).acquire({ waitMs: 20_000 }))) as Lease;
        expect(lease.holdCount).toBe(1);
        expect(await others.lock(name).tryAcquire()).toBeNull();
        await lease.release();
        const next = await others.lock(name).tryAcquire();
        expect(next?.holdCount).toBe(1);
        await next!.release();
      } finally {
        await locks.close();
        await others.close();
      }
    });

    it('a release GLIDE gave up on, resent and run late: the lock is free, nothing fails', async () => {
      const glide = glideStandIn(glideConfig(server, { requestTimeout: 100 }), false, opened);
      const locks = new LockClient(glide, { commandTimeoutMs: 3_000 });
      const others = new LockClient(admin);
      const name = uniqueName('glide:late-release');
      try {
        const lease = await locks.lock(name).acquire({ waitMs: 5_000 });
        await frozenUntilGlideTimesOut(glide, () => lease.release());
        const next = await others.lock(name).tryAcquire();
        expect(next?.holdCount).toBe(1);
        await next!.release();
      } finally {
        await locks.close();
        await others.close();
      }
    });
  });
} else {
  describe('port contract: Valkey GLIDE 2.5', () => {
    it('runs in the ioredis 5 pass only (its outcome does not depend on the pass)', () => {
      expect(passFlavour).not.toBe('ioredis-5');
    });
  });
}
