/** The unrelated promise-heavy loop (promise-loop.mjs); resolves to a checksum. */
export declare function promiseLoop(iterations: number): Promise<number>;
