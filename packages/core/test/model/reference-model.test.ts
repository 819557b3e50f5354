import { describe, expect, it } from 'vitest';
import { ReferenceModel, outcomeOf } from '@holdfast/test-utils/models';

/**
 * The checker itself: histories that break a rule must be flagged, and the
 * legitimate ones next to them must pass. No Redis here: the model is told
 * what happened.
 */
describe('reference model', () => {
  it('flags a second owner entering while the first still believes it holds the lock', () => {
    const model = new ReferenceModel();
    model.onAcquired(0, 'a', 1, 1, false);
    model.onAcquired(1, 'a', 2, 1, false);
    const [first, second] = model.owners;
    model.enter(first!, () => false);
    model.enter(second!, () => true);
    expect(model.violations).toEqual([expect.stringContaining('two owners of a at once')]);
  });

  it('lets the next owner in once the previous one left, or was told it lost the lock', () => {
    const model = new ReferenceModel();
    model.onAcquired(0, 'a', 1, 1, false);
    model.onAcquired(1, 'a', 2, 1, false);
    model.onAcquired(2, 'a', 3, 1, false);
    const [first, second, third] = model.owners;
    model.enter(first!, () => true);
    model.leave(first!);
    model.enter(second!, () => true);
    model.onLost(1, 'a', 2, 'expired');
    model.enter(third!, () => true);
    // Still inside but no longer believing it holds the lock (deadline passed): allowed.
    model.onAcquired(0, 'b', 1, 1, false);
    model.onAcquired(1, 'b', 2, 1, false);
    const [b1, b2] = model.owners.slice(3);
    model.enter(b1!, () => true);
    model.enter(b2!, (other) => other !== b1);
    expect(model.violations).toEqual([]);
  });

  it('flags a token that is not above one settled before the call was made, and a token granted twice', () => {
    const model = new ReferenceModel();
    const before = model.invokeAcquire('a', 'x');
    model.onAcquired(0, 'a', 5, 1, false);
    model.checkNewToken(model.owners[0]!, before);
    const after = model.invokeAcquire('a', 'y');
    model.onAcquired(1, 'a', 4, 1, false);
    model.checkNewToken(model.owners[1]!, after);
    model.onAcquired(2, 'a', 5, 1, false);
    expect(model.violations).toEqual([
      expect.stringContaining('token 4'),
      expect.stringContaining('token 5 of a granted to client 2'),
    ]);
  });

  it('follows hold counts through re-entries and releases, and flags a count that skips', () => {
    const model = new ReferenceModel();
    model.onAcquired(0, 'a', 1, 1, false);
    model.onAcquired(0, 'a', 1, 2, true);
    model.onAcquired(0, 'a', 1, 3, true);
    model.onReleased(0, 'a', 1, 2);
    model.onReleased(0, 'a', 1, 1);
    model.onReleased(0, 'a', 1, 0);
    expect(model.violations).toEqual([]);
    expect(model.owners[0]!.state).toBe('released');
    model.onAcquired(0, 'b', 1, 1, false);
    model.onAcquired(0, 'b', 1, 3, true);
    expect(model.violations).toEqual([expect.stringContaining('holdCount 3, model expects 2')]);
  });

  it("flags a lease lost as 'taken' or 'deleted', and 'closed' without a close()", () => {
    const model = new ReferenceModel();
    model.onAcquired(0, 'a', 1, 1, false);
    model.onAcquired(0, 'b', 1, 1, false);
    model.onAcquired(1, 'c', 1, 1, false);
    model.onLost(0, 'a', 1, 'taken');
    model.onLost(0, 'b', 1, 'closed');
    model.closeInvoked(1);
    model.onLost(1, 'c', 1, 'closed');
    expect(model.violations).toEqual([
      expect.stringContaining("lost with reason 'taken'"),
      expect.stringContaining("lost with reason 'closed'"),
    ]);
  });

  it('flags a close() that leaves a lease held without telling it, unless its release was already sent', () => {
    const model = new ReferenceModel();
    model.onAcquired(0, 'a', 1, 1, false);
    model.onAcquired(0, 'b', 1, 1, false);
    model.owners[1]!.releasing = 1;
    model.closeInvoked(0);
    model.closeSettled(0);
    expect(model.violations).toEqual([expect.stringContaining('left owner c0:a#1 held')]);
  });

  it('accepts only the allowed outcomes, by error code', () => {
    const model = new ReferenceModel();
    const closed = Object.assign(new Error('closed'), { code: 'ERR_CLIENT_CLOSED' });
    model.expectOutcome('ok', outcomeOf({ ok: false, error: closed }), new Set(['ERR_CLIENT_CLOSED']), 'tag');
    model.expectOutcome('null', outcomeOf({ ok: true, value: null }), new Set(['null']));
    model.expectOutcome('bad', outcomeOf({ ok: true, value: { token: 1 } }), new Set(['ERR_LOCK_TIMEOUT']));
    model.expectOutcome('foreign', outcomeOf({ ok: false, error: new TypeError('x') }), new Set(['value']));
    expect(model.violations).toEqual([
      expect.stringContaining('bad: got lease'),
      expect.stringContaining('foreign: got TypeError (foreign)'),
    ]);
    expect(model.tally.get('tag -> ERR_CLIENT_CLOSED')).toBe(1);
  });
});
