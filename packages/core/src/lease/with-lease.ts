import type { Engine } from '../engine/engine.js';
import { holdOf, type Lease } from './lease.js';
import { disposeTraced } from './lease-ops.js';

/**
 * The end of every `withLock`: runs `run` and releases `lease` afterwards,
 * whatever `run` does. Lenient: `run` may have released its own lease. A loss
 * is still an error, and so is a close() while `run` ran (the signal's reason
 * says which): the work was not exclusive.
 */
export async function runWithLease<T>(engine: Engine, lease: Lease, run: () => Promise<T> | T): Promise<T> {
  const hold = holdOf(lease);
  let result: T;
  try {
    result = await run();
  } catch (error) {
    await disposeTraced(engine, lease, hold).catch((releaseError: unknown) => engine.onError(releaseError));
    throw error;
  }
  await disposeTraced(engine, lease, hold);
  if (hold.lostError) throw hold.abortReason ?? hold.lostError;
  return result;
}
