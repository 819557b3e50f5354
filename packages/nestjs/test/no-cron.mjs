// An application where the `cron` package cannot be resolved (as if it were not installed: the
// module resolver refuses the name once @nestjs/schedule, which needs it itself, has loaded)
// calling a `@Cron` `@RunOnce` method: prints what the call rejected with, as JSON.
// Run by run-once.test.ts on the built package. Argument: the Redis URL.
import 'reflect-metadata';
import Module from 'node:module';
import { Injectable, Module as NestModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron } from '@nestjs/schedule';
import { HoldfastModule, RunOnce } from '@holdfast/nestjs';
import { Redis } from 'ioredis';

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'cron') throw Object.assign(new Error("Cannot find module 'cron'\nRequire stack: …"), { code: 'MODULE_NOT_FOUND' });
  return resolveFilename.call(this, request, ...rest);
};

class Jobs {
  async hourly() {}
}
const proto = Jobs.prototype;
let descriptor = Object.getOwnPropertyDescriptor(proto, 'hourly');
for (const decorator of [RunOnce(), Cron('0 * * * *')]) descriptor = decorator(proto, 'hourly', descriptor) ?? descriptor;
Object.defineProperty(proto, 'hourly', descriptor);
Injectable()(Jobs);

class AppModule {}
NestModule({ imports: [HoldfastModule.forRoot({ client: () => new Redis(process.argv[2]), prefix: 'no-cron' })], providers: [Jobs] })(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const outcome = await app.get(Jobs).hourly().then(
  () => ({ resolved: true }),
  (error) => ({ name: error.name, code: error.code, message: error.message }),
);
await app.close();
process.stdout.write(`${JSON.stringify(outcome)}\n`);
