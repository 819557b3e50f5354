import { KeyConflictError, LockClient, RedisCommandError } from '@holdfast/core';
import { readmeAcl, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { expect } from 'vitest';

/**
 * The rows of the table-driven ACL test (client/acl.test.ts): one per kind, each in its kind's
 * folder (`<kind>/acl-row.ts`). A row says what must work with the README's ACL, what a user
 * lacking one command must be refused, and how the kind fares with each command of the list
 * taken away in turn (Redis checks each command a script runs when it runs, and a refused one
 * stops the script with the writes before it applied).
 */
export interface AclRow {
  readonly kind: string;
  /** Every operation of the kind through the README's user (`locks`): asserts they all work. */
  readonly works?: (ctx: AclContext) => Promise<void>;
  /** A user lacking `command` (`no-<command>`): asserts what Redis refuses comes out as the server's error. */
  readonly refused?: { readonly command: string; readonly title: string; readonly check: (ctx: AclContext, user: string) => Promise<void> };
  /** One command of the list less at a time. */
  readonly sweep?: AclSweep;
  /** Further checks of the kind under the README's users, by title. */
  readonly also?: Readonly<Record<string, (ctx: AclContext) => Promise<void>>>;
}

export interface AclSweep {
  /** The commands taken away in turn (default: every command of the README's list). */
  readonly commands?: (all: readonly string[]) => readonly string[];
  /** One workload at a time rather than all at once (EVAL's always runs alone, after SCRIPT FLUSH). */
  readonly oneAtATime?: boolean;
  /** Config lines of a server of the row's own (default: the table's shared server). */
  readonly configLines?: readonly string[];
  /** Every operation as `user`, on names under `tag`: what failed, and what the state left behind breaks. */
  readonly workload: (ctx: AclContext, user: string, tag: string) => Promise<Outcome>;
  /** The README's notes on the list for this kind, checked against the commands whose absence made something fail. */
  readonly needs?: (failing: readonly string[], failuresOf: (commands: readonly string[]) => string) => void;
  /** Once every workload ran, by an admin client (the tags are the commands). */
  readonly after?: (ctx: AclContext, tags: readonly string[]) => Promise<void>;
}

export interface Outcome {
  /** What failed (the clients' error events included); empty: every operation worked. */
  readonly failures: string[];
  /** Invariants the state left behind breaks (empty: none). */
  readonly broken: string[];
}

export interface AclContext {
  /**
   * Users: `locks`, the README's line as it is; `all`, every command of it; `no-<command>`, every
   * command but one. The password is `secret`.
   */
  readonly server: RedisServer;
  readonly admin: Redis;
  /** The commands of the README's list. */
  readonly commands: readonly string[];
  /** A client subscribed to sharded channels: how many messages each received. */
  readonly announced: Map<string, number>;
  readonly subscriber: Redis;
}

/** A server with the README's users (see AclContext). */
export async function aclServer(configLines?: readonly string[]): Promise<AclContext> {
  const server = await startRedis(configLines ? { configLines: [...configLines] } : {});
  const admin = server.client();
  const acl = readmeAcl('core');
  const commands = acl.filter((a) => a.startsWith('+')).map((a) => a.slice(1));
  const rules = acl.slice(1).filter((a) => !a.startsWith('+'));
  await admin.call('ACL', 'SETUSER', ...acl);
  await admin.call('ACL', 'SETUSER', 'all', ...rules, ...commands.map((c) => `+${c}`));
  for (const command of commands) {
    await admin.call('ACL', 'SETUSER', `no-${command}`, ...rules, ...commands.filter((c) => c !== command).map((c) => `+${c}`));
  }
  const subscriber = server.client();
  const announced = new Map<string, number>();
  subscriber.on('smessage', (channel: string) => announced.set(channel, (announced.get(channel) ?? 0) + 1));
  return { server, admin, commands, announced, subscriber };
}

/** Runs `fn`; a rejection is recorded as a failure, never thrown. */
export async function attempt<T>(out: Outcome, what: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (error) {
    out.failures.push(`${what}: ${(error as Error).message}`);
    return undefined;
  }
}

/** A waiter, once it is queued (or already done); wrapped, so that awaiting this does not await the waiter. */
export async function queuedWaiter<T>(admin: Redis, start: () => Promise<T | undefined>, queue: string, before: number) {
  let settled = false;
  const waiting = start().finally(() => (settled = true));
  await waitFor(async () => settled || (await admin.llen(queue)) > before, { timeoutMs: 10_000 });
  return { waiting };
}

/** A waiter queued behind a holder gives up (abort): its queue place goes. The holder then releases. */
export async function cancelled(
  ctx: AclContext,
  out: Outcome,
  hold: () => Promise<{ release(): Promise<unknown> }>,
  wait: (signal: AbortSignal) => Promise<unknown>,
  queue: string,
): Promise<void> {
  const holder = await attempt(out, 'hold', hold);
  if (!holder) return;
  const abort = new AbortController();
  const before = await ctx.admin.llen(queue);
  const { waiting } = await queuedWaiter(ctx.admin, () => attempt(out, 'aborted wait', () => wait(abort.signal)), queue, before);
  abort.abort(new Error('given up'));
  await waiting;
  out.failures.pop(); // the abort itself
  await attempt(out, 'release', () => holder.release());
}

/** The release of `channel` reached a sharded subscriber (holdfast's waiters listen there on Redis 7). */
export async function announcedOn(ctx: AclContext, out: Outcome, channel: string, before: number): Promise<void> {
  await waitFor(() => (ctx.announced.get(channel) ?? 0) > before, { timeoutMs: 5_000 }).catch(() => out.failures.push(`no message on ${channel}`));
}

/** Server time in ms. */
export async function serverNow(admin: Redis): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/** Matches the server's refusal, whichever way the Redis version words it. */
export const REFUSED = /can't run this command|NOPERM/;

/** Runs `fn` with two clients of the README's user (`locks`), then asserts neither emitted an `error` event, and closes both. */
export async function withReadmeClients(ctx: AclContext, fn: (a: LockClient, b: LockClient) => Promise<void>): Promise<void> {
  const [a, b] = [0, 1].map(() => new LockClient(ctx.server.client({ username: 'locks', password: 'secret' })));
  const errors: unknown[] = [];
  for (const locks of [a!, b!]) locks.on('error', (e) => errors.push(e));
  await fn(a!, b!);
  expect(errors).toEqual([]);
  await a!.close();
  await b!.close();
}

/**
 * A row's `refused` check: a user lacking `command` gets the server's refusal from `call` as a
 * `RedisCommandError`, not as foreign data (`KeyConflictError`).
 */
export function refusedAsServerError(command: string, call: (locks: LockClient) => Promise<unknown>): NonNullable<AclRow['refused']> {
  return {
    command,
    title: "a missing permission is the server's error, not foreign data",
    async check(ctx, user) {
      const locks = new LockClient(ctx.server.client({ username: user, password: 'secret' }));
      // A clean-up after the failed call meets the same refusal.
      locks.on('error', () => undefined);
      const error = await call(locks).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisCommandError);
      expect(error).not.toBeInstanceOf(KeyConflictError);
      expect(String((error as Error).message)).toMatch(REFUSED);
      await locks.close();
    },
  };
}
