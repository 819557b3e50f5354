// An application without the `cron` package (a resolve hook makes it unfindable, as if it were
// not installed) calling a `@Cron` `@RunOnce` method: prints what the call rejected with, as JSON.
// Run by run-once.test.ts on the built package. Argument: the Redis URL.
import { register } from 'node:module';

const hook = `export async function resolve(specifier, context, next) {
  if (specifier === 'cron') throw Object.assign(new Error("Cannot find package 'cron'"), { code: 'ERR_MODULE_NOT_FOUND' });
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);

await import('reflect-metadata');
const { Injectable, Module } = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');
const { Cron } = await import('@nestjs/schedule');
const { HoldfastModule, RunOnce } = await import('@holdfast/nestjs');
const { Redis } = await import('ioredis');

class Jobs {
  async hourly() {}
}
const proto = Jobs.prototype;
let descriptor = Object.getOwnPropertyDescriptor(proto, 'hourly');
for (const decorator of [RunOnce(), Cron('0 * * * *')]) descriptor = decorator(proto, 'hourly', descriptor) ?? descriptor;
Object.defineProperty(proto, 'hourly', descriptor);
Injectable()(Jobs);

class AppModule {}
Module({ imports: [HoldfastModule.forRoot({ client: () => new Redis(process.argv[2]), prefix: 'no-cron' })], providers: [Jobs] })(AppModule);

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const outcome = await app.get(Jobs).hourly().then(
  () => ({ resolved: true }),
  (error) => ({ name: error.name, code: error.code, message: error.message }),
);
await app.close();
process.stdout.write(`${JSON.stringify(outcome)}\n`);
