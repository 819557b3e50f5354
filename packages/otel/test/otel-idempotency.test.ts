import { waitFor } from '@holdfast/test-utils';
import { beforeEach, describe, expect, it } from 'vitest';
import { useOtelFixture } from './otel-sdk.js';

describe('@holdfast/otel outcomes of idempotency keys and flights', () => {
  const fx = useOtelFixture('otelidem');
  beforeEach(() => {
    fx.instrument();
  });

  it('acquired where fn ran, replayed, conflict, in-progress', async () => {
    const locks = fx.client();
    const idem = locks.idempotency('pay');
    await idem.run('a', () => 1, { fingerprint: 'x' });
    await idem.run('a', () => 2, { fingerprint: 'x' });
    await expect(idem.run('a', () => 3, { fingerprint: 'y' })).rejects.toMatchObject({ code: 'ERR_IDEMPOTENCY_CONFLICT' });
    let open!: () => void;
    const running = idem.run('b', () => new Promise<number>((resolve) => (open = () => resolve(4))));
    await waitFor(async () => (await idem.get('b'))?.state === 'running');
    await expect(idem.run('b', () => 5, { waitMs: 0 })).rejects.toMatchObject({ code: 'ERR_IDEMPOTENCY_IN_PROGRESS' });
    open();
    await running;
    const spans = fx.sdk.spans.getFinishedSpans().filter((s) => s.name === 'holdfast.acquire');
    expect(spans.map((s) => [s.attributes['holdfast.lock.kind'], s.attributes['holdfast.lock.outcome']])).toEqual([
      ['idempotency', 'acquired'],
      ['idempotency', 'replayed'],
      ['idempotency', 'conflict'],
      ['idempotency', 'acquired'],
      ['idempotency', 'in-progress'],
    ]);
  });
});
