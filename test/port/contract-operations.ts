import { isServerReply, isTransient, replies, runScript, runScriptReplicated } from '@holdfast/core/workspace';
import { uniqueName } from '@holdfast/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_DIFFERENCES } from './client-differences.js';
import { port, readyPort, settle, testScripts, waitReady, type PortFixture } from './helpers.js';

/** The port's operations on a healthy connection, and what it says about the client. */
export function describeOperations(fx: PortFixture): void {
  const expected = CLIENT_DIFFERENCES[fx.flavour];

  describe('operations', () => {
    beforeAll(async () => {
      // A user of its own, so that CLIENT LIST shows the protocol of this client's connection (the one that ran EVAL:
      // a node-redis twin's ioredis side connects as the same user).
      await fx.admin().call('ACL', 'SETUSER', 'port-resp', 'on', '>secret', '~*', '&*', '+@all');
    });

    it(`describes its client: kind, standalone, ${expected.endpoint ? 'endpoint' : 'no endpoint (the client does not show it)'}, offline queue, primaries() with info()`, async () => {
      const server = fx.server();
      const p = await readyPort(fx.client());
      expect(p.kind).toBe(expected.kind);
      expect(p.isCluster).toBe(false);
      expect(p.endpoint).toBe(expected.endpoint ? `127.0.0.1:${server.port}/0` : undefined);
      expect(p.offlineQueue).toBe(true);
      expect(p.nodeOfSlot(0)).toBeUndefined();
      const nodes = p.primaries();
      expect(nodes.map((n) => n.address)).toEqual([expected.endpoint ? `127.0.0.1:${server.port}` : undefined]);
      const info = await nodes[0]!.info();
      expect(info).toMatch(/redis_version:/);
      expect(info).toMatch(/maxmemory_policy:/);
      expect(info).toMatch(/run_id:[0-9a-f]{40}/);
      // `db` is part of the endpoint (Redlock tells instances apart by it).
      expect(port(fx.client({ db: 3 })).endpoint).toBe(expected.endpoint ? `127.0.0.1:${server.port}/3` : undefined);
      // Without such an option (GLIDE), the client always keeps a call while it reconnects.
      expect(port(fx.client({ enableOfflineQueue: false })).offlineQueue).toBe(!expected.offlineQueueOption);
    });

    it(`speaks RESP${expected.resp} by default`, async () => {
      const p = await readyPort(fx.client({ username: 'port-resp', password: 'secret' }));
      expect(replies.int(await p.eval("return 1", [], []))).toBe(1);
      const lines = String(await fx.admin().call('CLIENT', 'LIST')).split('\n').filter((l) => l.includes(' user=port-resp ') && l.includes(' cmd=eval '));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatch(new RegExp(` resp=${expected.resp}( |$)`));
    });

    it('evalsha of an uncached script rejects NOSCRIPT as a server reply; runScript falls back to eval, which caches it', async () => {
      const p = await readyPort(fx.client());
      const key = uniqueName('port:incr');
      const s = testScripts.incr;
      await fx.admin().call('SCRIPT', 'FLUSH');
      const { error } = await settle(p.evalsha(s.sha, [key], []));
      expect(error).toBeInstanceOf(Error);
      // runScript's test: the message starts with the server's word.
      expect((error as Error).message.startsWith('NOSCRIPT')).toBe(true);
      expect(isServerReply(error)).toBe(true);
      expect(isTransient(error)).toBe(false);
      expect(replies.int(await runScript(p, s, [key], []))).toBe(1);
      expect(await fx.admin().call('SCRIPT', 'EXISTS', s.sha)).toEqual([1]);
      expect(replies.int(await p.evalsha(s.sha, [key], []))).toBe(2);
      expect(replies.int(await p.eval(s.source, [key], []))).toBe(3);
      expect(await fx.admin().get(key)).toBe('3');
    });

    it('replies: integers, strings, nested arrays and nil, decoded by core as they are by every client', async () => {
      const p = await readyPort(fx.client());
      const shaped = await runScript(p, testScripts.shapes, [], [42, 'two']);
      expect(shaped).toEqual([42, 'two', [7, 'x']]);
      expect(await runScript(p, testScripts.missing, [uniqueName('port:none')], [])).toBeNull();
      // Core's decoders over real replies: a bare integer, and an array of integers.
      const acquire = defineReply("return tonumber(ARGV[1])");
      expect(replies.acquireReply(await p.eval(acquire, [], [7]), 1_000)).toEqual({ granted: true, token: 7, holdCount: 1, pttl: 1_000 });
      const array = defineReply('return {1, 9, 2, 800}');
      expect(replies.acquireReply(await p.eval(array, [], []))).toEqual({ granted: true, token: 9, holdCount: 2, pttl: 800 });
      expect(replies.releaseReply(await p.eval('return 0', [], []))).toEqual({ ok: true, remaining: 0 });
      // ioredis's `stringNumbers` turns integers into strings; core decodes both the same.
      const strings = await readyPort(fx.client({ stringNumbers: true }));
      const reply = (await strings.eval(acquire, [], [11])) as unknown;
      expect(typeof reply).toBe(expected.kind === 'ioredis' ? 'string' : 'number');
      expect(replies.acquireReply(reply, 500)).toEqual({ granted: true, token: 11, holdCount: 1, pttl: 500 });
    });

    it('pipeline of a script and WAIT: one [error, reply] per command, in order, errors per command', async () => {
      const p = await readyPort(fx.client());
      const key = uniqueName('port:pipe');
      const s = testScripts.incr;
      const ok = await p.pipeline(
        [{ kind: 'eval', source: s.source, keys: [key], args: [] }, { kind: 'wait', replicas: 0, timeoutMs: 0 }],
        key,
      );
      expect(ok).toHaveLength(2);
      expect(ok[0]![0]).toBeNull();
      expect(replies.int(ok[0]![1])).toBe(1);
      expect(ok[1]![0]).toBeNull();
      expect(replies.int(ok[1]![1])).toBe(0);
      const failed = await p.pipeline(
        [{ kind: 'evalsha', sha: 'f'.repeat(40), keys: [key], args: [] }, { kind: 'wait', replicas: 0, timeoutMs: 0 }],
        key,
      );
      expect(failed[0]![0]).toBeInstanceOf(Error);
      expect(failed[0]![0]!.message.startsWith('NOSCRIPT')).toBe(true);
      expect(isServerReply(failed[0]![0])).toBe(true);
      expect(failed[1]![0]).toBeNull();
      expect(replies.int(failed[1]![1])).toBe(0);
      // What core builds on it: the script's reply and the acknowledgements.
      const replicated = await runScriptReplicated(p, s, [key], [], { replicas: 0, timeoutMs: 0 });
      expect(replies.int(replicated.reply)).toBe(2);
      expect(replicated.acknowledged).toBe(0);
      expect(await fx.admin().get(key)).toBe('2');
    });

    it('hmget (nil for a missing field), setEx (with its TTL), del (the count)', async () => {
      const p = await readyPort(fx.client());
      const hash = uniqueName('port:hash');
      await fx.admin().hset(hash, 'a', '1');
      expect(await p.hmget(hash, ['a', 'b'])).toEqual(['1', null]);
      expect(await p.hmget(uniqueName('port:nohash'), ['a'])).toEqual([null]);
      const key = uniqueName('port:setex');
      expect(await p.setEx(key, 'v', 30)).toBe('OK');
      expect(await fx.admin().get(key)).toBe('v');
      const ttl = await fx.admin().ttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(30);
      expect(replies.int(await p.del(key))).toBe(1);
      expect(replies.int(await p.del(key))).toBe(0);
    });

    it(`keyPrefix: ${expected.keyPrefix ? 'reported, and applied to every key' : "'' (the client has none)"}`, async () => {
      const p = await readyPort(fx.client({ keyPrefix: 'pfx:' }));
      const key = uniqueName('port:prefixed');
      expect(p.keyPrefix).toBe(expected.keyPrefix ? 'pfx:' : '');
      await p.setEx(key, 'v', 30);
      expect(await fx.admin().get(`${p.keyPrefix}${key}`)).toBe('v');
      expect(replies.int(await runScript(p, testScripts.incr, [`${key}:n`], []))).toBe(1);
      expect(await fx.admin().get(`${p.keyPrefix}${key}:n`)).toBe('1');
    });

    it('a script gets its keys and arguments in order, keyPrefix on the keys only, with 16 values and with 17', async () => {
      // The ioredis adapter sends up to 16 as one flat list and more as their arrays (port/ioredis.ts).
      const p = await readyPort(fx.client({ keyPrefix: 'pfx:' }));
      const echo = "return {table.concat(KEYS, ','), table.concat(ARGV, ',')}";
      for (const argCount of [13, 14]) {
        const keys = [uniqueName('port:k'), uniqueName('port:k'), uniqueName('port:k')];
        const args = Array.from({ length: argCount }, (_, i) => (i % 2 === 0 ? i : `a${i}`));
        const reply = await p.eval(echo, keys, args);
        expect(reply).toEqual([keys.map((key) => `${p.keyPrefix}${key}`).join(','), args.map(String).join(',')]);
      }
    });

    it(`a lazy client: ${expected.lazyStatus === 'wait' ? "'wait' until its first command; connect() leaves a standalone one lazy" : 'no lazy state, connecting at once'}`, async () => {
      const p = port(fx.client({ lazyConnect: true }));
      if (expected.lazyStatus === 'wait') expect(p.status()).toBe('wait');
      else expect(['connecting', 'ready']).toContain(p.status());
      p.connect();
      if (expected.lazyStatus === 'wait') expect(p.status()).toBe('wait');
      expect(replies.int(await p.eval('return 5', [], []))).toBe(5);
      await waitReady(p);
      expect(p.status()).toBe('ready');
    });
  });
}

/** A script's source, told apart from the contract's others by its comment. */
function defineReply(body: string): string {
  return `-- port contract reply\n${body}`;
}
