/**
 * `@holdfast/cli`: the `holdfast` command (`npx @holdfast/cli ls`), and the
 * functions behind it for programs that want the same view.
 *
 * @packageDocumentation
 */
export { run, USAGE } from './run.js';
export type { Io } from './run.js';
export { EXIT, CliError } from './cli-error.js';
export { connect } from './connect.js';
export type { ConnectOptions, Client } from './connect.js';
export { snapshot, readState, scanNames, kindsOf, namesOf, globMatcher } from './snapshot.js';
export type { LockState, Holder, QueuedWaiter, SyncKind, ReadContext, FoundName } from './snapshot.js';
export type { HolderNamesLike } from './holder-names.js';
export type { RawName } from './state-keys.js';
export { lockTable, describe, formatMs, table } from './render.js';
export { watch, Changes } from './watch.js';
export { HandoffCounter, channelOf } from './handoffs.js';
export type { WatchOptions, Screen, ChangeCount } from './watch.js';
