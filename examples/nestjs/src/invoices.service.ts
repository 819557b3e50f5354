import { Injectable } from '@nestjs/common';
import { LockClient, type Lease } from '@holdfast/core';
import { LockLease, WithLock } from '@holdfast/nestjs';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

@Injectable()
export class InvoicesService {
  // The module's LockClient, injected by type like any provider.
  constructor(readonly locks: LockClient) {}

  /** One payment per invoice at a time, across every instance of the application. */
  @WithLock((id: string) => `invoice:${id}`, { waitMs: 5_000 })
  async pay(id: string, who: string, @LockLease() lease?: Lease): Promise<void> {
    console.log(`[${who}] paying invoice ${id} (token ${lease!.token})`);
    await sleep(100);
    await this.audit(id, who); // the same lock: re-entered, not waited for
    console.log(`[${who}] paid invoice ${id}`);
  }

  @WithLock((id: string) => `invoice:${id}`)
  async audit(id: string, who: string, @LockLease() lease?: Lease): Promise<void> {
    console.log(`[${who}] audit of invoice ${id} inside the same lock: holdCount ${lease!.holdCount}`);
  }

  /** Gives up after 200 ms when someone else holds the invoice. */
  @WithLock((id: string) => `invoice:${id}`, { waitMs: 200 })
  async refund(id: string): Promise<string> {
    return `refunded invoice ${id}`;
  }
}
