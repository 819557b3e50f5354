import type { LockKind } from '../engine/kind.js';
import { scripts, takeWithLease } from './mutex-scripts.js';

/** The reentrant mutex (`client.lock(name)`): its scripts, on the shared acquisition path. */
export const MUTEX: LockKind = {
  role: 'lock',
  acquire: scripts.acquire,
  release: scripts.release,
  take: scripts.take,
  takeWithLease,
  releaseAll: scripts.releaseAll,
  releaseTaken: scripts.releaseTaken,
  cancel: scripts.cancel,
  extend: scripts.extend,
  renew: scripts.renew,
  inspect: scripts.inspect,
  forceRelease: scripts.forceRelease,
  args: [],
};
