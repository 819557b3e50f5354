import { lockKeys } from '@holdfast/core/internal';

/**
 * Names whose lock keys share one hash slot (`count` of them, each starting
 * with `base`): a multi-lock takes them by one script call.
 */
export function sameSlotNames(base: string, count: number): string[] {
  const slot = lockKeys('p', `${base}-0`).slot;
  const names = [`${base}-0`];
  for (let i = 1; names.length < count; i++) {
    const name = `${base}-${i}`;
    if (lockKeys('p', name).slot === slot) names.push(name);
  }
  return names;
}

/** Names whose lock keys are in `count` different hash slots. */
export function differentSlotNames(base: string, count: number): string[] {
  const seen = new Set<number>();
  const names: string[] = [];
  for (let i = 0; names.length < count; i++) {
    const name = `${base}-${i}`;
    const slot = lockKeys('p', name).slot;
    if (!seen.has(slot)) {
      seen.add(slot);
      names.push(name);
    }
  }
  return names;
}
