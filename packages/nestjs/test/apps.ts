// Providers and modules the Nest tests boot: decorated as an application's own code is.
import { LockClient, type Lease } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { Inject, Injectable, Module } from '@nestjs/common';
import { LockLease, WithLock } from '../src/index.js';

/** What a decorated method saw of its lease. */
export interface Seen {
  readonly name: string;
  readonly holdCount: number;
  readonly token: number;
  readonly leaseMs: number;
}

const seen = (lease: Lease | undefined): Seen => ({
  name: lease!.name,
  holdCount: lease!.holdCount,
  token: lease!.token,
  leaseMs: lease!.leaseMs,
});

@Injectable()
export class Invoices {
  /** Resolves the current `hold()` call when set. */
  release: (() => void) | undefined;
  entered = 0;

  @WithLock((id: string) => `invoice:${id}`, { waitMs: 300 })
  async pay(id: string, @LockLease() lease?: Lease): Promise<Seen> {
    return seen(lease);
  }

  /** Calls `pay` of the same invoice while holding its lock: a re-entry, not a wait for itself. */
  @WithLock((id: string) => `invoice:${id}`)
  async payTwice(id: string, @LockLease() lease?: Lease): Promise<[Seen, Seen]> {
    return [seen(lease), await this.pay(id)];
  }

  /** Holds `invoice:<id>` until `release()` is called. */
  @WithLock((id: string) => `invoice:${id}`)
  async hold(id: string, @LockLease() lease?: Lease): Promise<{ aborted: boolean }> {
    this.entered++;
    await new Promise<void>((resolve) => (this.release = resolve));
    return { aborted: lease!.signal.aborted };
  }

  /** A fixed name, lease parameter first. */
  @WithLock('nightly')
  async nightly(@LockLease() lease?: Lease, label = 'run'): Promise<[Seen, string]> {
    return [seen(lease), label];
  }
}

/** A provider of a module that does not import HoldfastModule: the module is global. */
@Injectable()
export class Reports {
  constructor(@Inject(LockClient) readonly locks: LockClient) {}

  @WithLock('report')
  async build(@LockLease() lease?: Lease): Promise<number> {
    return lease!.token;
  }
}

@Module({ providers: [Reports], exports: [Reports] })
export class ReportsModule {}

/** Renewal through the module's watchdog, for a method that runs longer than its lease. */
@Injectable()
export class Exports {
  constructor(@Inject(Watchdog) readonly dog: Watchdog) {}

  @WithLock('export')
  async run(@LockLease() lease?: Lease): Promise<{ leaseMs: number; held: boolean }> {
    await new Promise((resolve) => this.dog.once('renewed', resolve));
    return { leaseMs: lease!.leaseMs, held: lease!.isHeld };
  }
}

/** The token of the settings a forRootAsync factory reads (each test provides its own values). */
export class LockConfig {
  url = '';
  prefix = '';
}
