import { InvalidArgumentError } from '@holdfast/core';
import type { ServerCheck } from '@holdfast/core/internal';

/**
 * Two instances that are one server (one address under two names, `localhost`
 * beside `127.0.0.1`) would let that server form a quorum on its own: refused
 * once the instances have said who they are (`run_id`, random per server process).
 */
export class DistinctServers {
  readonly #checks: readonly ServerCheck[];
  /** Each check's run ids as last compared: a check replaces its array when it learns new ones. */
  #compared: (readonly string[])[] = [];

  constructor(checks: readonly ServerCheck[]) {
    this.#checks = checks;
  }

  /** Throws InvalidArgumentError when two instances reported one run id; compares only after a check learned new ids. */
  assert(): void {
    const checks = this.#checks;
    // Every acquisition asks: a plain loop, no closure per call.
    let i = 0;
    while (i < checks.length && checks[i]!.runIds === this.#compared[i]) i++;
    if (i === checks.length) return;
    sameServerTwice(checks);
    this.#compared = checks.map((check) => check.runIds);
  }
}

function sameServerTwice(checks: readonly ServerCheck[]): void {
  const seen = new Map<string, number>();
  checks.forEach((check, i) => {
    for (const runId of check.runIds) {
      const first = seen.get(runId);
      if (first !== undefined && first !== i) {
        throw new InvalidArgumentError(
          `Expected \`instances\` to be distinct servers, got one server (run_id ${runId}) at ${first} and ${i}`,
        );
      }
      seen.set(runId, i);
    }
  });
}
