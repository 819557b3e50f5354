import { channel, tracingChannel } from 'node:diagnostics_channel';
import { TELEMETRY_CHANNELS, type AcquireMessage, type LostMessage, type ReleaseMessage, type ExtendMessage } from '@holdfast/core';
import { afterEach, describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

type Phase = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error';

/** Subscribes to every phase of one tracing channel; returns what it saw and the unsubscribe. */
function record<T extends object>(name: string) {
  const seen: { phase: Phase; message: T }[] = [];
  const ch = tracingChannel<unknown, T>(name);
  const handlers = {
    start: (message: T) => seen.push({ phase: 'start', message }),
    end: (message: T) => seen.push({ phase: 'end', message }),
    asyncStart: (message: T) => seen.push({ phase: 'asyncStart', message }),
    asyncEnd: (message: T) => seen.push({ phase: 'asyncEnd', message }),
    error: (message: T) => seen.push({ phase: 'error', message }),
  };
  ch.subscribe(handlers);
  return { seen, stop: () => ch.unsubscribe(handlers) };
}

describe('diagnostics_channel telemetry', () => {
  const fx = useRedis();
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('traces acquire, extend and release with their context, result and hold time', async () => {
    const locks = await fx.client();
    const acquire = record<AcquireMessage>(TELEMETRY_CHANNELS.acquire);
    const release = record<ReleaseMessage>(TELEMETRY_CHANNELS.release);
    const extend = record<ExtendMessage>(TELEMETRY_CHANNELS.extend);
    stops.push(acquire.stop, release.stop, extend.stop);

    const lease = await locks.lock('traced').acquire({ leaseMs: 10_000 });
    await lease.extend(20_000);
    await delay(20);
    await lease.release();

    expect(acquire.seen.map((s) => s.phase)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    const started = acquire.seen[0]!.message;
    expect(started).toMatchObject({ name: 'traced', kind: 'lock', mode: 'wait', clientId: locks.id });
    // One context object through every phase, the lease set as its result.
    expect(acquire.seen.every((s) => s.message === started)).toBe(true);
    expect(started.result).toBe(lease);
    expect(extend.seen.at(-1)!.message).toMatchObject({ name: 'traced', kind: 'lock', token: lease.token, leaseMs: 20_000 });
    const released = release.seen.at(-1)!.message;
    expect(released).toMatchObject({ name: 'traced', kind: 'lock', token: lease.token, final: true, clientId: locks.id });
    expect(released.heldMs).toBeGreaterThanOrEqual(20);
    // The release names the acquisition that granted its hold: the same context object.
    expect(released.acquire).toBe(started);
  });

  it('ties releases and losses to their acquisition only for holds granted while someone listened', async () => {
    const locks = await fx.client();
    const early = await locks.lock('early').acquire();
    const doomed = await locks.lock('early-lost').acquire();
    const acquire = record<AcquireMessage>(TELEMETRY_CHANNELS.acquire);
    const release = record<ReleaseMessage>(TELEMETRY_CHANNELS.release);
    const lost: LostMessage[] = [];
    const onLost = (message: unknown) => lost.push(message as LostMessage);
    channel(TELEMETRY_CHANNELS.lost).subscribe(onLost);
    stops.push(acquire.stop, release.stop, () => channel(TELEMETRY_CHANNELS.lost).unsubscribe(onLost));

    await locks.lock('late').withLock(async (outer) => {
      // A re-entry is traced too, and keeps the first acquisition as its hold's.
      await (await locks.lock('late').acquire()).release();
      expect(release.seen.at(-1)!.message).toMatchObject({ final: false, acquire: acquire.seen[0]!.message });
      expect(outer.holdCount).toBe(1);
    });
    await early.release();
    await locks.lock('early-lost').forceRelease();
    expect(doomed.signal.aborted).toBe(true);

    const ends = release.seen.filter((s) => s.phase === 'asyncEnd').map((s) => s.message);
    expect(ends.map((m) => [m.name, m.final, m.acquire === undefined, m.heldMs === undefined])).toEqual([
      ['late', false, false, false],
      ['late', true, false, false],
      ['early', true, true, true],
    ]);
    expect(ends[1]!.acquire).toBe(acquire.seen[0]!.message);
    expect(lost.map((m) => [m.name, m.acquire, m.heldMs])).toEqual([['early-lost', undefined, undefined]]);
  });

  it('names the kind, reports a busy tryAcquire as null and a failed acquisition on error', async () => {
    const locks = await fx.client();
    const acquire = record<AcquireMessage>(TELEMETRY_CHANNELS.acquire);
    stops.push(acquire.stop);
    const rw = locks.readWriteLock('rw');
    const read = await rw.read.acquire();
    expect(await rw.write.tryAcquire()).toBeNull();
    await expect(rw.write.acquire({ waitMs: 50 })).rejects.toThrow('rw');
    const permit = await locks.semaphore('sem', { permits: 2 }).acquire();

    // A rejection publishes `error` first; every acquisition ends with one `asyncEnd`.
    expect(acquire.seen.filter((s) => s.phase === 'error').map((s) => s.message.kind)).toEqual(['write']);
    const ends = acquire.seen.filter((s) => s.phase === 'asyncEnd').map((s) => s.message);
    expect(ends.map((m) => [m.kind, m.mode])).toEqual([
      ['read', 'wait'],
      ['write', 'try'],
      ['write', 'wait'],
      ['semaphore', 'wait'],
    ]);
    expect(ends[1]!.result).toBeNull();
    expect(ends[2]!.error).toMatchObject({ code: 'ERR_LOCK_TIMEOUT' });
    expect(ends[3]!.result).toBe(permit);
    await read.release();
    await permit.release();
  });

  it('publishes lost leases on holdfast:lost', async () => {
    const locks = await fx.client();
    const lost: LostMessage[] = [];
    const onLost = (message: unknown) => lost.push(message as LostMessage);
    channel(TELEMETRY_CHANNELS.lost).subscribe(onLost);
    stops.push(() => channel(TELEMETRY_CHANNELS.lost).unsubscribe(onLost));
    const lease = await locks.lock('forced').acquire();
    await locks.lock('forced').forceRelease();
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ name: 'forced', kind: 'lock', token: lease.token, reason: 'deleted', clientId: locks.id });
    expect(lost[0]!.error).toBe(lease.signal.reason);
  });

  it('builds no context while nobody subscribes', async () => {
    const locks = await fx.client();
    expect(tracingChannel(TELEMETRY_CHANNELS.acquire).hasSubscribers).toBe(false);
    // A lease still works in full with no subscriber (the untraced path).
    const lease = await locks.lock('quiet').acquire();
    await lease.release();
    expect(lease.isHeld).toBe(false);
  });
});
