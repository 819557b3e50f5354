import { describeBackend } from './shared-redis.js';

/**
 * Vitest globalSetup: runs once per `vitest run` in the main process, so the
 * backend line appears once in the log instead of once per worker.
 */
export default async function setup(): Promise<void> {
  console.log(await describeBackend());
}
