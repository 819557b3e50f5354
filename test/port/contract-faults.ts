import { RedisCommandError, RedisTimeoutError, RedisUnreachableError } from '@holdfast/core';
import type { RedisPort } from '@holdfast/core/workspace';
import { callRedis, isServerReply, isTransient, replies, runScript, runScriptReplicated } from '@holdfast/core/workspace';
import { FaultProxy, uniqueName, waitFor } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { isConnectionFailure } from '../../packages/core/src/port/errors.js';
import { CLIENT_DIFFERENCES } from './client-differences.js';
import { readyPort, settle, testScripts, type PortFixture } from './helpers.js';

/** Counts per port event. */
interface Seen {
  ready: number;
  close: number;
  end: number;
  refresh: number;
}

/** How often each port event was reported since `counting` was called. */
export function counting(p: RedisPort): Seen {
  const seen: Seen = { ready: 0, close: 0, end: 0, refresh: 0 };
  for (const event of ['ready', 'close', 'end', 'refresh'] as const) p.on(event, () => void (seen[event] += 1));
  return seen;
}

/** A failure of the connection as core classifies it: retried, and not the server refusing. */
export function expectConnectionFailure(error: unknown): void {
  expect(error).toBeInstanceOf(Error);
  expect(isConnectionFailure(error)).toBe(true);
  expect(isTransient(error)).toBe(true);
  expect(isServerReply(error)).toBe(false);
}

/** Runs `attempt` through core's call policy, counting the attempts it made. */
export async function viaCore<T>(attempt: () => Promise<T>, commandTimeoutMs: number, retries: number) {
  let attempts = 0;
  const outcome = await settle(callRedis(() => (attempts++, attempt()), { commandTimeoutMs, retries }));
  return { ...outcome, attempts };
}

/** Failures the port must translate into what core's call policy relies on. */
export function describeFaults(fx: PortFixture): void {
  const expected = CLIENT_DIFFERENCES[fx.flavour];
  const proxies: FaultProxy[] = [];
  const proxied = async () => {
    const proxy = await FaultProxy.start(fx.server());
    proxies.push(proxy);
    return { proxy, p: await readyPort(fx.client({ host: proxy.host, port: proxy.port })) };
  };
  afterEach(async () => {
    fx.server().resume();
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  describe('failures', () => {
    it('a command the ACL refuses: a server reply, not transient, tried once by callRedis (RedisCommandError)', async () => {
      await fx.admin().call('ACL', 'SETUSER', 'port-limited', 'on', '>secret', '~*', '&*', '+@all', '-del', '-set');
      const p = await readyPort(fx.client({ username: 'port-limited', password: 'secret' }));
      const key = uniqueName('port:acl');
      const refused = await settle(p.del(key));
      expect((refused.error as Error).message).toMatch(/NOPERM/);
      expect(isServerReply(refused.error)).toBe(true);
      expect(isTransient(refused.error)).toBe(false);
      // Refused inside a script: still the server's reply.
      const inScript = await settle(runScript(p, testScripts.write, [key], ['v']));
      expect((inScript.error as Error).message).toMatch(/NOPERM|can't run this command/);
      expect(isServerReply(inScript.error)).toBe(true);
      expect(isTransient(inScript.error)).toBe(false);
      const core = await viaCore(() => p.del(key), 2_000, 3);
      expect(core.attempts).toBe(1);
      expect(core.error).toBeInstanceOf(RedisCommandError);
      expect(core.error).not.toBeInstanceOf(RedisUnreachableError);
      expect(isServerReply(core.error)).toBe(true);
    });

    it('SCRIPT FLUSH: runScript and runScriptReplicated fall back to eval and answer as before', async () => {
      const p = await readyPort(fx.client());
      const key = uniqueName('port:flush');
      const s = testScripts.incr;
      const replicated = () => runScriptReplicated(p, s, [key], [], { replicas: 0, timeoutMs: 0 });
      expect(replies.int((await replicated()).reply)).toBe(1);
      expect(replies.int((await replicated()).reply)).toBe(2);
      await fx.admin().call('SCRIPT', 'FLUSH');
      expect(replies.int((await replicated()).reply)).toBe(3);
      await fx.admin().call('SCRIPT', 'FLUSH');
      expect(replies.int(await runScript(p, s, [key], []))).toBe(4);
      expect(await fx.admin().get(key)).toBe('4');
    });

    it('server frozen (SIGSTOP): callRedis rejects RedisTimeoutError (transient); resumed, replies stay in order', async () => {
      const p = await readyPort(fx.client());
      fx.server().pause();
      const core = await viaCore(() => p.eval('return 1', [], []), 300, 0);
      expect(core.error).toBeInstanceOf(RedisTimeoutError);
      expect(isTransient(core.error)).toBe(true);
      fx.server().resume();
      expect(replies.int(await p.eval('return 2', [], []))).toBe(2);
      expect(p.status()).toBe('ready');
    });

    it(`connection reset (RST): ${expected.connectionEvents === 'client' ? 'close, then ready again' : 'reconnected by the client; close and ready only as calls meet it'}, no end; off() removes the listener given`, async () => {
      const { proxy, p } = await proxied();
      const seen = counting(p);
      let removed = 0;
      const onClose = () => void removed++;
      const onReady = () => void removed++;
      p.on('close', onClose);
      p.on('ready', onReady);
      p.off('close', onClose);
      p.off('ready', onReady);
      proxy.resetAll();
      if (expected.connectionEvents === 'client') {
        await waitFor(() => seen.close >= 1 && seen.ready >= 1, { timeoutMs: 10_000, message: () => JSON.stringify(seen) });
        expect(p.status()).toBe('ready');
        expect(replies.int(await p.eval('return 6', [], []))).toBe(6);
      } else {
        // A call that met the reset failed with the connection, and was retried by callRedis.
        const core = await viaCore(() => p.eval('return 6', [], []), 2_000, 5);
        expect(replies.int(core.value)).toBe(6);
        expect(seen.close).toBe(core.attempts - 1);
        expect(seen.ready).toBe(seen.close);
        expect(p.status()).toBe('ready');
      }
      expect(removed).toBe(0);
      expect(seen.end).toBe(0);
    });

    // Core registers one function for several events and removes it from each (Redlock's
    // firstConnections: ready and close; ConnectionEpoch on a Cluster: close and end).
    it('off() removes a listener registered for several events from every one of them', async () => {
      const { proxy, p } = await proxied();
      const seen = counting(p);
      let removed = 0;
      const listener = () => void removed++;
      for (const event of ['ready', 'close', 'end'] as const) p.on(event, listener);
      for (const event of ['ready', 'close', 'end'] as const) p.off(event, listener);
      proxy.resetAll();
      if (expected.connectionEvents === 'client') {
        await waitFor(() => seen.close >= 1 && seen.ready >= 1, { timeoutMs: 10_000, message: () => JSON.stringify(seen) });
      } else {
        // Events from the calls: the first call after the reset fails with the connection (close), a retry answers (ready).
        const core = await viaCore(() => p.eval('return 6', [], []), 2_000, 5);
        expect(replies.int(core.value)).toBe(6);
        expect(seen.ready).toBe(seen.close);
      }
      expect(removed).toBe(0);
    });

    it(`a reply lost after the command ran: ${expected.resendsUnanswered ? 'resent, so a non-idempotent script runs twice' : 'rejected as a connection failure, the script ran once'}`, async () => {
      const { proxy, p } = await proxied();
      const key = uniqueName('port:dropped');
      const s = testScripts.incr;
      expect(replies.int(await runScript(p, s, [`${key}:warm`], []))).toBe(1);
      // The script's reply (a fresh key counted to 1), not whatever another connection of the
      // client (node-redis keeps a second one through the proxy) reads at that moment.
      const dropped = proxy.dropNextReply((reply) => reply.toString() === ':1\r\n');
      const core = await viaCore(() => p.evalsha(s.sha, [key], []), 10_000, 0);
      await dropped;
      if (expected.resendsUnanswered) {
        expect(replies.int(core.value)).toBe(2);
        expect(await fx.admin().get(key)).toBe('2');
      } else {
        expect(core.error).toBeInstanceOf(RedisCommandError);
        expectConnectionFailure((core.error as Error).cause);
        expect(await fx.admin().get(key)).toBe('1');
      }
      expect(core.attempts).toBe(1);
      await waitFor(() => p.status() === 'ready');
      expect(replies.int(await p.evalsha(s.sha, [key], []))).toBe(expected.resendsUnanswered ? 3 : 2);
    });

    const whileDown =
      expected.whileDown === 'request-timeout'
        ? "calls fail at the client's request timeout (RedisTimeoutError, transient); restarted: retried calls answered"
        : expected.connectionEvents === 'calls'
          ? "a call waits in the client's queue; restarted: answered, no end"
          : 'close, calls fail as connection failures; restarted: ready, queued calls answered';
    it(`server killed (SIGKILL): ${whileDown}`, async () => {
      const server = fx.server();
      if (expected.whileDown === 'request-timeout') {
        const p = await readyPort(fx.client());
        const key = uniqueName('port:restart');
        // Connected (GLIDE's clients are made connected; the contract's is made as the test starts).
        expect(replies.int(await p.eval('return 0', [], []))).toBe(0);
        await server.kill();
        const failed = await settle(p.eval('return 1', [], []));
        expect(failed.error).toBeInstanceOf(Error);
        expect(isTransient(failed.error), String(failed.error)).toBe(true);
        expect(isServerReply(failed.error)).toBe(false);
        // Retried by callRedis until the server is back; the restarted server has no script cached.
        const retried = callRedis(() => runScript(p, testScripts.incr, [key], []), { commandTimeoutMs: 2_000, retries: 100 });
        await server.restart();
        expect(replies.int(await retried)).toBe(1);
        expect(replies.int(await runScript(p, testScripts.incr, [key], []))).toBe(2);
        expect(p.status()).toBe('ready');
        return;
      }
      if (expected.connectionEvents === 'calls') {
        // No connection events to wait for, and no offline-queue option the port can read: a call
        // made while the server is down waits in the client's queue (Bun's, while it reconnects).
        const p = await readyPort(fx.client());
        const seen = counting(p);
        const key = uniqueName('port:restart');
        expect(replies.int(await p.eval('return 0', [], []))).toBe(0);
        await server.kill();
        const queued = runScript(p, testScripts.incr, [key], []);
        await server.restart();
        // The restarted server has no script cached: runScript fell back to eval.
        expect(replies.int(await queued)).toBe(1);
        expect(replies.int(await runScript(p, testScripts.incr, [key], []))).toBe(2);
        expect(p.status()).toBe('ready');
        expect(seen.end).toBe(0);
        return;
      }
      const p = await readyPort(fx.client());
      const fast = await readyPort(fx.client({ enableOfflineQueue: false }));
      const seen = counting(p);
      const key = uniqueName('port:restart');
      await server.kill();
      await waitFor(() => seen.close >= 1 && p.status() !== 'ready', { timeoutMs: 10_000, message: () => p.status() });
      expect(['close', 'reconnecting', 'connecting', 'connect']).toContain(p.status());
      await waitFor(() => fast.status() !== 'ready');
      const failed = await settle(fast.eval('return 1', [], []));
      expectConnectionFailure(failed.error);
      const core = await viaCore(() => fast.eval('return 1', [], []), 2_000, 0);
      expect(core.error).toBeInstanceOf(RedisCommandError);
      expectConnectionFailure((core.error as Error).cause);
      // With the offline queue (the default), a call made while down waits for the server.
      const queued = runScript(p, testScripts.incr, [key], []);
      await server.restart();
      await waitFor(() => seen.ready >= 1 && p.status() === 'ready', { timeoutMs: 15_000, message: () => p.status() });
      // The restarted server has no script cached: runScript fell back to eval.
      expect(replies.int(await queued)).toBe(1);
      expect(replies.int(await runScript(p, testScripts.incr, [key], []))).toBe(2);
      expect(seen.end).toBe(0);
      await waitFor(() => fast.status() === 'ready', { timeoutMs: 15_000 });
      expect(replies.int(await fast.eval('return 7', [], []))).toBe(7);
    });

    it(`closed by the application: end; a call then is ${expected.afterClose === 'unreachable-end' ? "RedisUnreachableError 'end', never retried" : 'a connection failure, retried until the budget ends'}`, async () => {
      const client = fx.client();
      const p = await readyPort(client);
      const seen = counting(p);
      // Connected first (Bun's client connects at its first command).
      if (expected.closedSeenBy === 'call') expect(replies.int(await p.eval('return 0', [], []))).toBe(0);
      client.disconnect();
      // A client that shows nothing of it (Bun's) is seen closed by the first call after.
      const first = expected.closedSeenBy === 'call' ? await settle(p.evalsha(testScripts.incr.sha, ['k'], [])) : undefined;
      // status() first: a client with no events of its own (GLIDE) reports `end` once the port sees it closed.
      await waitFor(() => p.status() === 'end' && seen.end >= 1, { message: () => `${p.status()} ${JSON.stringify(seen)}` });
      const failed = first ?? (await settle(p.evalsha(testScripts.incr.sha, ['k'], [])));
      const core = await viaCore(() => p.evalsha(testScripts.incr.sha, ['k'], []), 1_000, 2);
      if (expected.afterClose === 'unreachable-end') {
        for (const error of [failed.error, core.error]) {
          expect(error).toBeInstanceOf(RedisUnreachableError);
          expect((error as RedisUnreachableError).status).toBe('end');
          expect(isTransient(error)).toBe(false);
        }
        expect(core.attempts).toBe(1);
      } else {
        expectConnectionFailure(failed.error);
        expect(core.error).toBeInstanceOf(RedisCommandError);
        expect(core.error).not.toBeInstanceOf(RedisUnreachableError);
        expect(core.attempts).toBe(3);
      }
    });
  });
}
