import { LockClient } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxKeyRow } from '../src/inbox-state.js';
import { holdfast } from './support.js';

describe('holdfast CLI: inboxes', () => {
  let server: RedisServer;
  let locks: LockClient;
  let open!: () => void;
  const prefix = 'cliinbox';
  beforeAll(async () => {
    server = await startRedis();
    locks = new LockClient(server.client(), { prefix });
    // 'idle': two messages nobody processes; 'busy': a processor mid-call, one message behind it.
    const producer = locks.inbox<string>('threads');
    await producer.post('idle', 'a');
    await producer.post('idle', 'b');
    const gate = new Promise<void>((resolve) => (open = resolve));
    let running = false;
    const inbox = locks.inbox<string>('threads', {
      handler: async () => {
        running = true;
        await gate;
      },
    });
    await inbox.post('busy', 'x');
    await waitFor(() => running);
    await producer.post('busy', 'y');
  }, 30_000);
  afterAll(async () => {
    open?.();
    await locks?.close();
    await server?.stop();
  });

  it('inbox <name>: each key with pending messages, its processor and its oldest message', async () => {
    const { code, stdout } = await holdfast(['inbox', 'threads', '--url', server.url, '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as InboxKeyRow[];
    expect(rows.map((r) => [r.key, r.pending, r.processorToken === null])).toEqual([
      ['busy', 2, false],
      ['idle', 2, true],
    ]);
    for (const row of rows) expect(row.oldestAgeMs).toBeGreaterThanOrEqual(0);
    expect(rows[0]!.leaseTtlMs).toBeGreaterThan(0);
    const table = await holdfast(['inbox', 'threads', '--url', server.url, '--prefix', prefix]);
    expect(table.stdout.split('\n')[0]).toMatch(/^KEY\s+PENDING\s+PROCESSOR\s+LEASE\s+OLDEST$/);
    expect(table.stdout).toContain('busy');
  });

  it('inbox <name> of an inbox without pending messages: exit 3', async () => {
    const { code, stderr } = await holdfast(['inbox', 'nothing', '--url', server.url, '--prefix', prefix]);
    expect(code).toBe(3);
    expect(stderr).toContain('No message pending in inbox `nothing`');
  });
});
