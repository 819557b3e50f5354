import { RedisTimeoutError } from '@holdfast/core';
import type { RedisPort, SubscriberPort } from '@holdfast/core/workspace';
import { isServerReply, replies, withTimeout } from '@holdfast/core/workspace';
import { activeResources, uniqueName, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { CLIENT_DIFFERENCES } from './client-differences.js';
import { readyPort, settle, type PortFixture } from './helpers.js';

/** A subscriber with everything it reports recorded. */
export interface Recorded {
  readonly sub: SubscriberPort;
  readonly messages: [string, string][];
  readonly errors: unknown[];
  reconnected: number;
}

/** `onReconnected`: called after the count went up (Waiters sends every subscription again there). */
export function record(p: RedisPort, onReconnected?: (r: Recorded) => void): Recorded {
  const messages: [string, string][] = [];
  const errors: unknown[] = [];
  const recorded: Recorded = {
    messages,
    errors,
    reconnected: 0,
    sub: p.subscriber({
      onMessage: (channel, message) => messages.push([channel, message]),
      onReconnected: () => {
        recorded.reconnected++;
        onReconnected?.(recorded);
      },
      onError: (error) => errors.push(error),
    }),
  };
  return recorded;
}

export const count = (r: Recorded, channel: string, message: string): number =>
  r.messages.filter(([c, m]) => c === channel && m === message).length;

/** Subscribers of a channel at the server, sharded or classic. */
export async function subscribers(admin: Redis, channel: string, sharded: boolean): Promise<number> {
  const reply = (await admin.call('PUBSUB', sharded ? 'SHARDNUMSUB' : 'NUMSUB', channel)) as [string, number];
  return Number(reply[1]);
}

/**
 * Publishes `message` and then a marker on the same channel, and waits for the marker: messages
 * of one channel arrive in order, so once the marker is in, `message` was delivered as often as
 * it ever will be, with no fixed wait.
 */
export async function publishAndDrain(admin: Redis, r: Recorded, channel: string, sharded: boolean, message: string): Promise<number> {
  const publish = sharded ? 'SPUBLISH' : 'PUBLISH';
  await admin.call(publish, channel, message);
  const marker = uniqueName('marker');
  await admin.call(publish, channel, marker);
  await waitFor(() => count(r, channel, marker) > 0, { message: `${marker} not delivered on ${channel}` });
  return count(r, channel, message);
}

/** A sharded subscribe refused where the client has no sharded pub/sub: the words Waiters switches to classic pub/sub on. */
async function expectNoShardedPubSub(subscribing: Promise<void>): Promise<void> {
  const error = await subscribing.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toMatch(/unknown command/i);
}

const sockets = () => activeResources().filter((name) => name === 'TCPSocketWrap').length;

/** The subscriber connection holdfast opens for its waiters. */
export function describeSubscriber(fx: PortFixture): void {
  const expected = CLIENT_DIFFERENCES[fx.flavour];

  describe('subscriber', () => {
    it(`whenReady, ${expected.shardedStandalone ? 'sharded and classic' : 'classic (a sharded subscribe refused as an unknown command)'} subscribe/unsubscribe, listening, onMessage`, async () => {
      const admin = fx.admin();
      const p = await readyPort(fx.client());
      const r = record(p);
      const [shard, classic] = [uniqueName('{port}:ch'), uniqueName('port:classic')];
      await r.sub.whenReady(10_000);
      if (expected.shardedStandalone) await r.sub.subscribe(shard, true);
      else await expectNoShardedPubSub(r.sub.subscribe(shard, true));
      await r.sub.subscribe(classic, false);
      expect(r.sub.listening).toBe(true);
      expect(await subscribers(admin, shard, true)).toBe(expected.shardedStandalone ? 1 : 0);
      expect(await subscribers(admin, classic, false)).toBe(1);
      if (expected.shardedStandalone) expect(await publishAndDrain(admin, r, shard, true, 'm1')).toBe(1);
      expect(await publishAndDrain(admin, r, classic, false, 'm2')).toBe(1);
      // The application's connection is not the subscriber: it still runs commands.
      expect(replies.int(await p.eval('return 3', [], []))).toBe(3);
      if (expected.shardedStandalone) await r.sub.unsubscribe(shard, true);
      await r.sub.unsubscribe(classic, false);
      expect(await subscribers(admin, shard, true)).toBe(0);
      expect(await subscribers(admin, classic, false)).toBe(0);
      r.sub.close();
      await waitFor(() => !r.sub.listening);
      expect(r.errors).toEqual([]);
    });

    it(`its connection killed: onReconnected; ${expected.resubscribesItself ? 'it subscribes again by itself' : 'subscriptions are sent again by their owner'}; later messages arrive once`, async () => {
      const admin = fx.admin();
      const p = await readyPort(fx.client());
      const r = record(p);
      const [shard, classic] = [uniqueName('{port}:ch'), uniqueName('port:classic')];
      // Without sharded pub/sub (a standalone GLIDE client), Waiters subscribes both as classic channels.
      const sharded = expected.shardedStandalone;
      await r.sub.whenReady(10_000);
      await r.sub.subscribe(shard, sharded);
      await r.sub.subscribe(classic, false);
      expect(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')).toBeGreaterThanOrEqual(1);
      await waitFor(() => r.reconnected === 1, { timeoutMs: 10_000, message: 'no onReconnected' });
      if (expected.resubscribesItself) {
        await waitFor(async () => (await subscribers(admin, shard, sharded)) === 1 && (await subscribers(admin, classic, false)) === 1);
      } else {
        expect(await subscribers(admin, shard, sharded)).toBe(0);
        expect(await subscribers(admin, classic, false)).toBe(0);
      }
      // What Waiters does on onReconnected: every subscription sent again.
      await r.sub.subscribe(shard, sharded);
      await r.sub.subscribe(classic, false);
      expect(r.sub.listening).toBe(true);
      expect(await publishAndDrain(admin, r, shard, sharded, 'after')).toBe(1);
      expect(await publishAndDrain(admin, r, classic, false, 'after')).toBe(1);
      expect(r.reconnected).toBe(1);
      r.sub.close();
    });

    it(`a subscribe the ACL refuses: ${expected.subscribeRefused === 'reply' ? "the server's NOPERM reply" : 'never confirmed (the client resends it), ended by the caller\'s deadline'}, nothing subscribed; what wait: 'auto' turns to spinning on`, async () => {
      const admin = fx.admin();
      await admin.call('ACL', 'SETUSER', 'port-nopubsub', 'on', '>secret', '~*', '&*', '+@all', '-@pubsub');
      const p = await readyPort(fx.client({ username: 'port-nopubsub', password: 'secret' }));
      const r = record(p);
      await r.sub.whenReady(10_000);
      const channel = uniqueName('port:refused');
      const refused = await settle(withTimeout(r.sub.subscribe(channel, false), 2_000));
      if (expected.subscribeRefused === 'reply') {
        expect((refused.error as Error).message).toMatch(/NOPERM|permission/i);
        expect(isServerReply(refused.error)).toBe(true);
      } else {
        expect(refused.error).toBeInstanceOf(RedisTimeoutError);
      }
      expect(await subscribers(admin, channel, false)).toBe(0);
      // The application's connection still runs commands.
      expect(replies.int(await p.eval('return 4', [], []))).toBe(4);
      r.sub.close();
    });

    it('close() closes its own connection only, leaving no connection at the server and no socket here', async () => {
      const admin = fx.admin();
      const p = await readyPort(fx.client());
      const pubsubClients = async () => String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).trim().split('\n').filter(Boolean).length;
      // Earlier tests' subscribers gone, at the server and here.
      await waitFor(async () => (await pubsubClients()) === 0);
      const before = sockets();
      const r = record(p);
      const channel = uniqueName('{port}:closing');
      await r.sub.whenReady(10_000);
      await r.sub.subscribe(channel, expected.shardedStandalone);
      expect(await pubsubClients()).toBe(1);
      r.sub.close();
      await waitFor(async () => (await pubsubClients()) === 0);
      await waitFor(() => sockets() <= before, { message: () => `sockets: ${sockets()} (before: ${before})` });
      expect(r.sub.listening).toBe(false);
      expect(p.status()).toBe('ready');
      expect(replies.int(await p.eval('return 4', [], []))).toBe(4);
      expect(r.errors).toEqual([]);
    });
  });
}
