/**
 * `@holdfast/test-utils/models`: the reference models the model-based tests run programs against,
 * and the history checkers the chaos runs and multi-process tests judge their recorded histories
 * with. One home for every kind's model and checker, so that no test reaches into another
 * package's test folder for one.
 */
export * from './model/checker.js';
export * from './model/election-history.js';
export * from './model/election-model.js';
export * from './model/fixture.js';
export * from './model/history.js';
export * from './model/inbox-history.js';
export * from './model/multi-lock-history.js';
export * from './model/permit-checker.js';
export * from './model/program.js';
export * from './model/reference-model.js';
export * from './model/run-program.js';
export * from './model/rw-checker.js';
export * from './model/semaphore-model.js';
