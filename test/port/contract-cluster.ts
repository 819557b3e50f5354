import { RedisUnreachableError } from '@holdfast/core';
import { callRedis, isTransient, replies, runScript, runScriptReplicated, slotOf, watchConnection, type RedisPort } from '@holdfast/core/workspace';
import { startRedisCluster, waitFor, type RedisClusterFixture } from '@holdfast/test-utils';
import type { ClusterOptions, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_DIFFERENCES, type Flavour } from './client-differences.js';
import { admins, clusterNodes, failOver, migrateSlot, ownerOf } from './cluster-topology.js';
import { counting } from './contract-faults.js';
import { publishAndDrain, record, subscribers, type Recorded } from './contract-subscriber.js';
import { port, settle, testScripts, waitReady } from './helpers.js';

/**
 * The port contract on a Cluster client of one library (`client`: a client of `flavour` to the
 * fixture's cluster, options in ioredis's words): routing by key, the slot map, primaries, the
 * sharded subscriber, and what a live slot migration and a CLUSTER FAILOVER change. One
 * 3-primary cluster for the file; the topology changes run last.
 */
export function describeClusterContract(flavour: Flavour, client: (cluster: RedisClusterFixture, options?: ClusterOptions) => object & { disconnect(): void; listenerCount(event: string): number }): void {
  const expected = CLIENT_DIFFERENCES[flavour];
  let cluster: RedisClusterFixture;
  let admin: (address: string) => Redis;
  let entry: Redis;
  let p: RedisPort;
  /** A hash tag per primary: keys `{tag}:...` of one slot each, on three different nodes. */
  let tags: string[];
  const clientOf = (options?: ClusterOptions) => client(cluster, options);

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    admin = admins(cluster);
    entry = admin(`${cluster.servers[0]!.host}:${cluster.servers[0]!.port}`);
    p = port(client(cluster));
    await waitReady(p, 20_000);
    const owners = new Map<string, string>();
    for (let i = 0; owners.size < 3; i++) {
      const owner = (await ownerOf(entry, slotOf(`t${i}`))).address;
      if (![...owners.values()].includes(owner)) owners.set(`t${i}`, owner);
    }
    tags = [...owners.keys()];
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const ownerAddress = async (tag: string) => (await ownerOf(entry, slotOf(tag))).address;

  /** A subscriber that sends its subscriptions again on onReconnected, as Waiters does. */
  function resubscribing(channels: string[]): Recorded {
    return record(p, (r) => {
      for (const channel of channels) r.sub.subscribe(channel, true).catch((error: unknown) => r.errors.push(error));
    });
  }

  describe(`port contract: Cluster (${flavour})`, () => {
    it('describes a Cluster: no endpoint, nodeOfSlot() per CLUSTER NODES, primaries() whose info() is each node\'s', async () => {
      expect(p.kind).toBe(expected.kind);
      expect(p.isCluster).toBe(true);
      expect(p.endpoint).toBeUndefined();
      expect(p.keyPrefix).toBe('');
      expect(p.offlineQueue).toBe(true);
      expect(p.status()).toBe('ready');
      for (const tag of tags) expect(p.nodeOfSlot(slotOf(tag))).toBe(await ownerAddress(tag));
      const primaries = (await clusterNodes(entry)).filter((n) => n.primary).map((n) => n.address);
      await waitFor(() => p.primaries().length === 3, { message: () => `primaries: ${p.primaries().map((n) => n.address).join()}` });
      expect(p.primaries().map((n) => n.address).sort()).toEqual([...primaries].sort());
      for (const node of p.primaries()) {
        const runId = (await node.info()).match(/run_id:(\w+)/)?.[1];
        expect(runId).toBe((await admin(node.address!).info('server')).match(/run_id:(\w+)/)?.[1]);
      }
    });

    // ConnectionEpoch listens to a Cluster's close and end with one function, and removes it from both.
    it("off() removes a listener registered for several events: ConnectionEpoch's stop() leaves the client's listeners as they were", async () => {
      const client = clientOf();
      const watched = port(client);
      await waitReady(watched, 20_000);
      const names = ['ready', 'close', 'end', 'refresh', 'connect', 'node-reconnecting', 'disconnect', 'error'];
      const listeners = () => names.map((name) => `${name}:${client.listenerCount(name)}`).join(' ');
      const before = listeners();
      watchConnection(watched).stop();
      expect(listeners()).toBe(before);
      client.disconnect();
    });

    it('evalsha (NOSCRIPT, then eval through runScript), hmget, setEx and del reach the node of their key', async () => {
      for (const tag of tags) {
        const node = admin(await ownerAddress(tag));
        const key = `{${tag}}:k`;
        await node.call('SCRIPT', 'FLUSH');
        const { error } = await settle(p.evalsha(testScripts.incr.sha, [key], []));
        expect((error as Error).message.startsWith('NOSCRIPT')).toBe(true);
        expect(replies.int(await runScript(p, testScripts.incr, [key], []))).toBe(1);
        expect(replies.int(await p.evalsha(testScripts.incr.sha, [key], []))).toBe(2);
        expect(await node.get(key)).toBe('2');
        await node.hset(`{${tag}}:h`, 'a', 'x');
        expect(await p.hmget(`{${tag}}:h`, ['a', 'b'])).toEqual(['x', null]);
        expect(await p.setEx(`{${tag}}:s`, 'v', 30)).toBe('OK');
        expect(await node.get(`{${tag}}:s`)).toBe('v');
        expect(replies.int(await p.del(`{${tag}}:s`))).toBe(1);
      }
    });

    it("pipeline of a script and WAIT runs on the routing key's node: WAIT counts that node's replica", async () => {
      for (const tag of tags) {
        const key = `{${tag}}:pipe`;
        const out = await p.pipeline(
          [{ kind: 'eval', source: testScripts.incr.source, keys: [key], args: [] }, { kind: 'wait', replicas: 1, timeoutMs: 5_000 }],
          key,
        );
        expect(out.map(([error]) => error)).toEqual([null, null]);
        expect(replies.int(out[0]![1])).toBe(1);
        expect(replies.int(out[1]![1])).toBe(1);
        const replicated = await runScriptReplicated(p, testScripts.incr, [key], [], { replicas: 1, timeoutMs: 5_000 });
        expect([replies.int(replicated.reply), replicated.acknowledged]).toEqual([2, 1]);
        expect(await admin(await ownerAddress(tag)).get(key)).toBe('2');
      }
    });

    it('sharded subscriber: a channel on every primary, each SPUBLISH at its node delivered once', async () => {
      const channels = tags.map((tag) => `{${tag}}:ch`);
      const r = record(p);
      await r.sub.whenReady(10_000);
      for (const channel of channels) await r.sub.subscribe(channel, true);
      expect(r.sub.listening).toBe(true);
      for (const [i, channel] of channels.entries()) {
        const node = admin(await ownerAddress(tags[i]!));
        expect(await subscribers(node, channel, true)).toBe(1);
        expect(await publishAndDrain(node, r, channel, true, 'hello')).toBe(1);
      }
      r.sub.close();
      expect(r.errors).toEqual([]);
    });

    it(`a lazy Cluster client: ${expected.lazyStatus === 'wait' ? "'wait' until connect() starts it" : 'connecting at once'}; closed by the application: end, then status ${expected.clusterClosedStatus}`, async () => {
      const client = clientOf({ lazyConnect: true });
      const lazy = port(client);
      if (expected.lazyStatus === 'wait') expect(lazy.status()).toBe('wait');
      lazy.connect();
      expect(lazy.status()).not.toBe('wait');
      await waitReady(lazy, 20_000);
      expect(replies.int(await runScript(lazy, testScripts.incr, [`{${tags[0]}}:lazy`], []))).toBe(1);
      const seen = counting(lazy);
      client.disconnect();
      await waitFor(() => lazy.status() === expected.clusterClosedStatus && seen.end >= 1, { message: () => `${lazy.status()} ${JSON.stringify(seen)}` });
      // A closed ioredis Cluster keeps calls in its offline queue, unanswered: core refuses them by
      // the port's status (ConnectionEpoch), as it does for a Cluster that reached no node.
      const epoch = watchConnection(lazy);
      let attempts = 0;
      const policy = { commandTimeoutMs: 1_000, retries: 2, reachable: epoch.reachable };
      const { error } = await settle(callRedis(() => (attempts++, lazy.evalsha(testScripts.incr.sha, [`{${tags[0]}}:lazy`], [])), policy));
      epoch.stop();
      expect(error).toBeInstanceOf(RedisUnreachableError);
      expect((error as RedisUnreachableError).status).toBe(expected.clusterClosedStatus);
      expect(isTransient(error)).toBe(expected.clusterClosedStatus !== 'end');
      expect(attempts).toBe(0);
    });

    it(`a live slot migration: MOVED followed to the new node, nodeOfSlot() follows, refresh ${expected.refreshEvent ? 'reported' : 'never reported'}, the sharded subscription follows`, async () => {
      const tag = tags[0]!;
      const [key, channel] = [`{${tag}}:moving`, `{${tag}}:moving-ch`];
      expect(replies.int(await runScript(p, testScripts.incr, [key], []))).toBe(1);
      const r = resubscribing([channel]);
      await r.sub.whenReady(10_000);
      await r.sub.subscribe(channel, true);
      expect(await publishAndDrain(admin(await ownerAddress(tag)), r, channel, true, 'before')).toBe(1);
      const seen = counting(p);
      const { to } = await migrateSlot(admin, entry, slotOf(tag));
      expect(replies.int(await runScript(p, testScripts.incr, [key], []))).toBe(2);
      expect(await admin(to.address).get(key)).toBe('2');
      await waitFor(() => p.nodeOfSlot(slotOf(tag)) === to.address, { message: () => `nodeOfSlot: ${p.nodeOfSlot(slotOf(tag))}` });
      if (expected.refreshEvent) await waitFor(() => seen.refresh >= 1);
      else expect(seen.refresh).toBe(0);
      await waitFor(async () => (await subscribers(admin(to.address), channel, true)) === 1, { timeoutMs: 10_000, message: 'not subscribed at the new node' });
      expect(await publishAndDrain(admin(to.address), r, channel, true, 'after')).toBe(1);
      r.sub.close();
      expect(r.errors).toEqual([]);
    }, 30_000);

    // Last: the failed-over primary's replica serves the slot from now on.
    it('CLUSTER FAILOVER: calls reach the promoted primary (script cache empty there), the sharded subscription follows', async () => {
      const tag = tags[1]!;
      const [key, channel] = [`{${tag}}:failover`, `{${tag}}:failover-ch`];
      expect(replies.int(await runScript(p, testScripts.incr, [key], []))).toBe(1);
      const r = resubscribing([channel]);
      await r.sub.whenReady(10_000);
      await r.sub.subscribe(channel, true);
      const { to } = await failOver(admin, entry, slotOf(tag));
      const reply = await callRedis(() => runScript(p, testScripts.incr, [key], []), { commandTimeoutMs: 2_000, retries: 20 });
      expect(replies.int(reply)).toBe(2);
      expect(await admin(to.address).get(key)).toBe('2');
      // The map follows the next redirect: a slot refresh answered by a node that has not heard of
      // the failover yet (gossip lags on a busy machine) may put the old primary back until a call
      // to it is redirected again, so each check makes one more call to the slot, as work would.
      let probes = 0;
      await waitFor(
        async () => {
          if (p.nodeOfSlot(slotOf(tag)) === to.address) return true;
          await runScript(p, testScripts.incr, [`{${tag}}:failover-probe`], []).catch(() => undefined);
          probes++;
          return p.nodeOfSlot(slotOf(tag)) === to.address;
        },
        { timeoutMs: 10_000, message: () => `nodeOfSlot: ${p.nodeOfSlot(slotOf(tag))} after ${probes} probes` },
      );
      await waitFor(async () => (await subscribers(admin(to.address), channel, true)) === 1, { timeoutMs: 10_000, message: 'not subscribed at the new primary' });
      expect(await publishAndDrain(admin(to.address), r, channel, true, 'after')).toBe(1);
      r.sub.close();
      expect(r.errors).toEqual([]);
    }, 40_000);
  });
}
