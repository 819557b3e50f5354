import { Inject, Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import type { RunOnceClaim } from '@holdfast/core';
import { LockLease, RunOnce } from '@holdfast/nestjs';

/** The name of this instance of the application (a host name, a pod name). */
export const INSTANCE = Symbol('instance');

/** Every run, across the instances of this process: the firing's key and who ran it. */
export const runs: { key: string; instance: string }[] = [];

@Injectable()
export class ReportsService {
  constructor(@Inject(INSTANCE) readonly instance: string) {}

  /** Every instance schedules it every second; each firing runs in one of them only. */
  @Cron('* * * * * *')
  @RunOnce()
  async everySecond(@LockLease() claim?: RunOnceClaim): Promise<void> {
    runs.push({ key: claim!.key, instance: this.instance });
    console.log(`[${this.instance}] ran ${claim!.key}`);
  }
}
