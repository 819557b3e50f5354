import { describe } from 'vitest';
import { describeFaults } from './contract-faults.js';
import { describeOperations } from './contract-operations.js';
import { describeSubscriber } from './contract-subscriber.js';
import type { PortFixture } from './helpers.js';
/**
 * The port contract: what holdfast relies on from `RedisPort` (packages/core/src/port/port.ts),
 * asserted against a real server for one client library. The behaviour suites run on one client;
 * this suite is what runs once per client, so everything core and Redlock read from a port
 * (replies, errors, events, status, the subscriber) is asserted here.
 */

/** The whole contract for one client library over a standalone server. */
export function describePortContract(name: string, fixture: PortFixture): void {
  describe(`port contract: ${name} (${fixture.flavour})`, () => {
    describeOperations(fixture);
    describeSubscriber(fixture);
    describeFaults(fixture);
  });
}
