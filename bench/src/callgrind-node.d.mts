/**
 * Instructions callgrind counted for `node ...flags --expose-gc script ...args` (callgrind-node.mjs);
 * flags default to `--single-threaded`.
 */
export declare function countNodeInstructions(
  script: string,
  args: readonly string[],
  outFile?: string,
  flags?: readonly string[],
): Promise<number>;
