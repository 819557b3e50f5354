/**
 * One 'abort' listener per AbortSignal, whatever the number of waits on it.
 *
 * A caller may share one signal between many waits (twenty acquisitions, a
 * multi-lock's parts, observers), and Node warns once an EventTarget has more
 * than ten listeners of a type (`MaxListenersExceededWarning`): holdfast must
 * not cause that warning in ordinary use. So every wait of the packages that
 * needs to hear an abort registers here instead of on the signal: the first
 * registration on a signal adds its one listener, the callbacks are kept in
 * a set, and the listener goes when the set empties. A signal nobody waits on
 * any more holds nothing of ours (and the WeakMap does not keep it alive).
 */

/** One registration: its own object, so that the same function registered twice is two entries. */
interface Entry {
  readonly callback: () => void;
}

interface Registry {
  readonly entries: Set<Entry>;
  readonly listener: () => void;
}

const registries = new WeakMap<AbortSignal, Registry>();

/**
 * Calls `callback` once when `signal` aborts (never for a signal aborted
 * already: check `aborted` first), unless the returned function removed it
 * before. Callbacks run in the order they were added; one that throws does
 * not keep the others from running (the first error is rethrown after them,
 * as a listener's would be).
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) return noop;
  let registry = registries.get(signal);
  if (registry === undefined) {
    const entries = new Set<Entry>();
    const listener = () => {
      registries.delete(signal);
      let failure: { error: unknown } | undefined;
      for (const entry of entries) {
        try {
          entry.callback();
        } catch (error) {
          failure ??= { error };
        }
      }
      entries.clear();
      if (failure) throw failure.error;
    };
    registry = { entries, listener };
    registries.set(signal, registry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const entry: Entry = { callback };
  const { entries, listener } = registry;
  entries.add(entry);
  return () => {
    if (!entries.delete(entry) || entries.size > 0) return;
    // The last one left before an abort: the listener goes too.
    if (registries.get(signal)?.entries === entries) registries.delete(signal);
    signal.removeEventListener('abort', listener);
  };
}

const noop = (): void => undefined;

