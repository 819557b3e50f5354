// One process of a Nest application locking through HoldfastModule, driven over stdin by
// cross-process.test.ts: each line is a command, each answer a JSON line on stdout. Plain
// JavaScript against the built package, so the decorators are applied as TypeScript's
// output applies them.
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HoldfastModule, LockLease, WithLock } from '@holdfast/nestjs';
import { Redis } from 'ioredis';

const [url, prefix] = process.argv.slice(2);

/** Applies method and parameter decorators the way TypeScript's emitted code does. */
function decorate(cls, method, decorators, params = {}) {
  const proto = cls.prototype;
  for (const [index, decorator] of Object.entries(params)) decorator(proto, method, Number(index));
  let descriptor = Object.getOwnPropertyDescriptor(proto, method);
  for (const decorator of [...decorators].reverse()) descriptor = decorator(proto, method, descriptor) ?? descriptor;
  Object.defineProperty(proto, method, descriptor);
}

const counter = new Redis(url);
let release;

class Jobs {
  /** Holds `shared` until the `release` command. */
  async hold(lease) {
    answer({ held: lease.token });
    await new Promise((resolve) => (release = resolve));
  }

  /** Takes `shared` within 300 ms or rejects. */
  async attempt(lease) {
    return lease.token;
  }

  /** Counts the processes inside `shared` at once: more than one is an overlap. */
  async critical() {
    const inside = await counter.incr(`${prefix}:inside`);
    await new Promise((resolve) => setImmediate(resolve));
    await counter.decr(`${prefix}:inside`);
    return inside;
  }

  /** Calls another method locking `shared` while holding it. */
  async outer(lease) {
    return [lease.holdCount, await this.inner()];
  }

  async inner(lease) {
    return lease.holdCount;
  }
}
decorate(Jobs, 'hold', [WithLock('shared')], { 0: LockLease() });
decorate(Jobs, 'attempt', [WithLock('shared', { waitMs: 300 })], { 0: LockLease() });
decorate(Jobs, 'critical', [WithLock('shared')]);
decorate(Jobs, 'outer', [WithLock('shared')], { 0: LockLease() });
decorate(Jobs, 'inner', [WithLock('shared')], { 0: LockLease() });
Injectable()(Jobs);

class AppModule {}
Module({ imports: [HoldfastModule.forRoot({ client: () => new Redis(url), prefix })], providers: [Jobs] })(AppModule);

function answer(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const jobs = app.get(Jobs);
const lines = createInterface({ input: process.stdin });
answer({ ready: true });
for await (const line of lines) {
  const [command, arg] = line.split(' ');
  if (command === 'hold') void jobs.hold();
  else if (command === 'release') release();
  else if (command === 'attempt') {
    answer(await jobs.attempt().then((token) => ({ token }), (error) => ({ error: error.name })));
  } else if (command === 'loop') {
    const counts = await Promise.all(Array.from({ length: Number(arg) }, () => jobs.critical()));
    answer({ maxInside: Math.max(...counts) });
  } else if (command === 'outer') answer({ holdCounts: await jobs.outer() });
  else if (command === 'close') {
    lines.close();
    await app.close();
    counter.disconnect();
    // No process.exit(): the process must end by itself, with no handle left.
  }
}
