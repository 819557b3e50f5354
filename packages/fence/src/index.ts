/**
 * `@holdfast/fence`: the database refuses the writes of a lock holder whose
 * fencing token is stale. The fenced transactions are in the subpaths
 * `@holdfast/fence/pg` (PostgreSQL, `pg`) and `@holdfast/fence/mysql` (MySQL
 * and MariaDB, `mysql2`); this entry has what both share.
 * @packageDocumentation
 */
export { FencedOffError, TransactionAbortedError } from './errors.js';
export type { FenceErrorCode } from './errors.js';
export { DEFAULT_TABLE, MAX_RESOURCE_BYTES, MAX_TABLE_LENGTH } from './fence.js';
export type { Fence, FenceOptions } from './fence.js';
