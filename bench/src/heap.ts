import { setTimeout as sleep } from 'node:timers/promises';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/**
 * Two full collections 20 ms apart (with --expose-gc; nothing without it): what a burst of acquisitions left
 * is collected before anything is measured.
 */
export async function settleHeap(): Promise<void> {
  gc();
  await sleep(20);
  gc();
}
