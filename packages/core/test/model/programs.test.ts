import { uniqueName } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { formatProgram, type Program, type Section, type Step, inOrder, runProgram, useModelRedis } from '@holdfast/test-utils/models';

/**
 * Hand-written programs through the same interpreter and model as the
 * property tests (test/chaos/model-based.test.ts), one per rule, each checked
 * for zero violations and for having reached the case it is about.
 */

const section = (s: Partial<Section> & Pick<Section, 'via' | 'lock'>): Section => ({
  op: 'section',
  client: 0,
  short: false,
  abort: false,
  body: [],
  end: 'release',
  ...s,
});

describe('model programs', () => {
  const redis = useModelRedis();

  async function run(program: Program): Promise<Map<string, number>> {
    const { model } = await runProgram(program, redis, inOrder, uniqueName('model'));
    expect(model.violations, `${formatProgram(program)}\n${model.trace.join('\n')}`).toEqual([]);
    return model.tally;
  }

  it('sibling tasks acquiring one lock through one client exclude each other', async () => {
    const task: Step[] = [section({ via: 'acquire', lock: 'a', body: [section({ via: 'acquire', lock: 'b' })] })];
    const tally = await run({ clients: 2, tasks: [task, task, task] });
    expect(tally.get('section entered')).toBe(6);
    expect(tally.get('acquire new owner -> lease')).toBe(6);
  });

  it('a bare acquire() of a lock its own chain holds is a new owner and waits for itself', async () => {
    const tally = await run({
      clients: 2,
      tasks: [
        [
          section({
            via: 'acquire',
            lock: 'a',
            body: [section({ via: 'acquire', lock: 'a' }), section({ via: 'try', lock: 'a' }), section({ via: 'withLock', lock: 'a', client: 1 })],
          }),
        ],
      ],
    });
    expect(tally.get('acquire held by its own chain -> ERR_LOCK_TIMEOUT')).toBe(1);
    expect(tally.get('try held by its own chain -> null')).toBe(1);
    expect(tally.get('withLock held by its own chain -> ERR_LOCK_TIMEOUT')).toBe(1);
  });

  it('inside withLock, the same lock through the same client re-enters, also from tasks the callback starts', async () => {
    const tally = await run({
      clients: 2,
      tasks: [
        [
          section({
            via: 'withLock',
            lock: 'a',
            body: [
              {
                op: 'spawn',
                tasks: [[section({ via: 'withLock', lock: 'a' })], [section({ via: 'acquire', lock: 'a', end: 'extend' })], [section({ via: 'try', lock: 'a' })]],
              },
            ],
          }),
        ],
        [section({ via: 'acquire', lock: 'a' })],
      ],
    });
    expect(tally.get('withLock in its withLock frame -> lease')).toBe(1);
    expect(tally.get('acquire in its withLock frame -> lease')).toBe(1);
    expect(tally.get('try in its withLock frame -> lease')).toBe(1);
    expect(tally.get('section re-entered by its owner')).toBe(3);
  });

  it('a short lease left to run out answers release with LockNotHeldError and extend with LockLostError', async () => {
    const tally = await run({
      clients: 2,
      tasks: [
        [section({ via: 'acquire', lock: 'a', short: true, end: 'expire' })],
        [section({ via: 'withLock', lock: 'b', short: true, end: 'expire' })],
      ],
    });
    expect(tally.get('extend -> ERR_LOCK_LOST')).toBe(2);
    expect(tally.get('release -> ERR_LOCK_NOT_HELD')).toBe(1);
    expect(tally.get('withLock ending expire -> ERR_LOCK_LOST')).toBe(1);
  });

  it('an aborted wait rejects with the signal reason; released leases answer LockNotHeldError', async () => {
    const tally = await run({
      clients: 2,
      tasks: [
        [section({ via: 'acquire', lock: 'a', body: [section({ via: 'acquire', lock: 'a', client: 1, abort: true })], end: 'releaseTwice' })],
        [section({ via: 'withLock', lock: 'b', end: 'releaseExtend' })],
      ],
    });
    expect(tally.get('acquire+abort held by its own chain -> TEST_ABORT')).toBe(1);
    expect(tally.get('release of a released lease -> ERR_LOCK_NOT_HELD')).toBe(1);
    expect(tally.get('extend of a released lease -> ERR_LOCK_NOT_HELD')).toBe(1);
  });

  it('close() inside withLock: the callback finishes, withLock rejects with ClientClosedError, later calls too', async () => {
    const tally = await run({
      clients: 2,
      tasks: [
        [
          section({
            via: 'withLock',
            lock: 'a',
            body: [{ op: 'close', client: 0, release: false }, section({ via: 'acquire', lock: 'b' })],
          }),
          section({ via: 'acquire', lock: 'a', client: 1 }),
        ],
      ],
    });
    expect(tally.get('close() with 1 held -> value')).toBe(1);
    expect(tally.get('acquire closed client -> ERR_CLIENT_CLOSED')).toBe(1);
    expect(tally.get('withLock ending release -> ERR_CLIENT_CLOSED')).toBe(1);
    // The lock stayed in Redis until its TTL, then client 1 got it.
    expect(tally.get('acquire new owner -> lease')).toBe(1);
  });
});
