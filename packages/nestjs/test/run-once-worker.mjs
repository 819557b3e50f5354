// One instance of a fleet for run-once-processes.test.ts: a Nest application whose `@Cron` method,
// firing every second through @nestjs/schedule, runs under `@RunOnce`. Each run records its claim's
// key (`Jobs.tick:<tick>`) and the instance's name in a Redis list; every call, run or skipped, is
// counted. Plain JavaScript against the built package, decorators applied as TypeScript's output
// applies them. Arguments: Redis URL, prefix, list key, instance name. Commands on stdin: `close`.
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { HoldfastModule, LockLease, RunOnce } from '@holdfast/nestjs';
import { Redis } from 'ioredis';

const [url, prefix, list, name] = process.argv.slice(2);
const recorder = new Redis(url);
let calls = 0;

/** Applies method and parameter decorators the way TypeScript's emitted code does. */
function decorate(cls, method, decorators, params = {}) {
  const proto = cls.prototype;
  for (const [index, decorator] of Object.entries(params)) decorator(proto, method, Number(index));
  let descriptor = Object.getOwnPropertyDescriptor(proto, method);
  for (const decorator of [...decorators].reverse()) descriptor = decorator(proto, method, descriptor) ?? descriptor;
  Object.defineProperty(proto, method, descriptor);
}

/** Counts every call, between @Cron and @RunOnce: @Cron's metadata then sits on this wrapper, not on @RunOnce's. */
const counted = (_target, _key, descriptor) => {
  const inner = descriptor.value;
  return {
    ...descriptor,
    value: function (...args) {
      calls++;
      return inner.apply(this, args);
    },
  };
};

class Jobs {
  async tick(claim) {
    await recorder.rpush(list, `${claim.key} ${name}`);
  }
}
decorate(Jobs, 'tick', [Cron('* * * * * *'), counted, RunOnce()], { 0: LockLease() });
Injectable()(Jobs);

class AppModule {}
Module({
  imports: [ScheduleModule.forRoot(), HoldfastModule.forRoot({ client: () => new Redis(url), prefix })],
  providers: [Jobs],
})(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
const lines = createInterface({ input: process.stdin });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of lines) {
  if (line === 'close') {
    lines.close();
    await app.close();
    await recorder.quit();
    process.stdout.write(`${JSON.stringify({ calls })}\n`);
    // No process.exit(): the process must end by itself, with no handle left.
  }
}
