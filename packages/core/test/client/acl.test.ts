import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aclServer, type AclContext, type AclRow, type Outcome } from '../acl-table.js';
import { barrierAcl } from '../barrier/acl-row.js';
import { electionAcl } from '../election/acl-row.js';
import { idempotencyAcl } from '../idempotency/acl-row.js';
import { inboxAcl } from '../inbox/acl-row.js';
import { latchAcl } from '../latch/acl-row.js';
import { mutexAcl } from '../mutex/acl-row.js';
import { readWriteAcl } from '../read-write/acl-row.js';
import { semaphoreAcl } from '../semaphore/acl-row.js';
import { clientAcl } from './acl-row.js';

/**
 * The minimal ACL documented in the README (read from it), kind by kind: one row per kind (in its
 * folder, `<kind>/acl-row.ts`) says what must work with it, what a user lacking one command must
 * be refused, and what a workload run by a user lacking each command in turn leaves behind (it
 * must hold the kind's invariants, and what fails tells which commands the kind needs).
 */
const ROWS: readonly AclRow[] = [mutexAcl, readWriteAcl, semaphoreAcl, electionAcl, latchAcl, barrierAcl, idempotencyAcl, inboxAcl, clientAcl];

/** Together, these kinds need every command of the list (each fails without it). */
const LIST_WITNESSES = ['mutex', 'read-write', 'semaphore', 'client'];

describe('the README ACL, kind by kind', () => {
  let ctx: AclContext;
  /** Commands whose absence made something of the kind fail, by kind. */
  const failing = new Map<string, readonly string[]>();
  beforeAll(async () => {
    ctx = await aclServer();
  });
  afterAll(() => ctx.server.stop());

  /** Each command of the row's list taken away in turn; with every command, nothing fails. */
  async function sweep(row: AclRow): Promise<void> {
    const s = row.sweep!;
    const on = s.configLines ? await aclServer(s.configLines) : ctx;
    try {
      const commands = s.commands ? s.commands(on.commands) : on.commands;
      expect(await s.workload(on, 'all', 'all')).toEqual({ failures: [], broken: [] });
      const outcomes = new Map<string, Outcome>();
      if (s.oneAtATime) {
        for (const command of commands) outcomes.set(command, await s.workload(on, `no-${command}`, command));
      } else {
        // EVAL is only sent when the server lacks a script (after SCRIPT FLUSH): that one runs alone.
        await Promise.all(commands.filter((c) => c !== 'eval').map(async (c) => outcomes.set(c, await s.workload(on, `no-${c}`, c))));
        if (commands.includes('eval')) {
          await on.admin.script('FLUSH');
          outcomes.set('eval', await s.workload(on, 'no-eval', 'eval'));
        }
      }
      // Whatever failed, the state stayed consistent.
      expect([...outcomes].flatMap(([command, outcome]) => outcome.broken.map((b) => `without ${command}: ${b}`))).toEqual([]);
      const needed = commands.filter((c) => outcomes.get(c)!.failures.length > 0);
      failing.set(row.kind, needed);
      // The failures themselves in the message: a timing failure under load is told from a real need.
      s.needs?.(needed, (found) => JSON.stringify(found.map((c) => [c, outcomes.get(c)!.failures])));
      await s.after?.(on, commands);
    } finally {
      if (on !== ctx) await on.server.stop();
    }
  }

  for (const row of ROWS) {
    describe(row.kind, () => {
      if (row.works) it('the README ACL runs every operation', () => row.works!(ctx));
      if (row.refused) it(`without ${row.refused.command}: ${row.refused.title}`, () => row.refused!.check(ctx, `no-${row.refused!.command}`));
      if (row.sweep) it('each command of the list taken away in turn breaks nothing; what fails is what the README says', () => sweep(row), 240_000);
      for (const [title, check] of Object.entries(row.also ?? {})) it(title, () => check(ctx));
    });
  }

  it('every command of the list is needed by some operation', () => {
    const unneeded = ctx.commands.filter((c) => LIST_WITNESSES.every((kind) => !failing.get(kind)!.includes(c)));
    expect(unneeded).toEqual([]);
  });
});
