import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { HoldfastModule } from '@holdfast/nestjs';
import type { RedisLike } from '@holdfast/core';
import { InvoicesService } from './invoices.service.js';
import { INSTANCE, ReportsService, runs } from './reports.service.js';

/** examples/shared/redis.mjs: a Redis for the example (REDIS_URL or a redis-server of its own) and its client. */
interface SharedRedis {
  withRedis(main: (url: string) => Promise<void>): Promise<void>;
  connect(url: string): Promise<RedisLike>;
}
const { withRedis, connect } = (await import('../../shared/redis.mjs' as string)) as SharedRedis;

/** Where the Redis URL comes from: a config provider, as forRootAsync's factory reads it. */
class RedisConfig {
  constructor(readonly url: string) {}
}

await withRedis(async (url) => {
  @Module({ providers: [{ provide: RedisConfig, useValue: new RedisConfig(url) }], exports: [RedisConfig] })
  class ConfigModule {}

  @Module({
    imports: [
      HoldfastModule.forRootAsync({
        imports: [ConfigModule],
        inject: [RedisConfig],
        // A factory: the module owns this client and closes it on shutdown.
        useFactory: (config: RedisConfig) => ({ client: () => connect(config.url), prefix: 'example-nest' }),
        watchdog: true, // leases of @WithLock methods renewed while they run
      }),
    ],
    providers: [InvoicesService],
  })
  class AppModule {}

  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const invoices = app.get(InvoicesService);

  // Two payments of one invoice at once: the second waits for the first.
  await Promise.all([invoices.pay('42', 'alice'), invoices.pay('42', 'bob')]);

  // Someone holds the invoice: the refund gives up with a LockTimeoutError.
  const held = await invoices.locks.lock('invoice:7').acquire();
  console.log(await invoices.refund('7').catch((error: Error) => `refund: ${error.name}`));
  await held.release();
  console.log(await invoices.refund('7'));

  await app.close(); // stops the watchdog, closes the LockClient, then the client the factory made
  console.log(await invoices.refund('7').catch((error: Error) => `after shutdown: ${error.name}`));

  // Two instances of a scheduled application (two processes, in production), each firing
  // ReportsService.everySecond every second: each firing runs in one of them.
  const fleet = await Promise.all(
    ['web-1', 'web-2'].map((instance) => {
      @Module({
        imports: [ScheduleModule.forRoot(), HoldfastModule.forRoot({ client: () => connect(url), prefix: 'example-nest' })],
        providers: [ReportsService, { provide: INSTANCE, useValue: instance }],
      })
      class FleetModule {}
      return NestFactory.createApplicationContext(FleetModule, { logger: false });
    }),
  );
  await new Promise<void>((resolve) => {
    const check = setInterval(() => runs.length >= 3 && (clearInterval(check), resolve()), 50);
  });
  await Promise.all(fleet.map((app) => app.close()));
  const firings = new Set(runs.map((run) => run.key));
  console.log(`${firings.size} firings, each on one instance: ${firings.size === runs.length}`);
});
