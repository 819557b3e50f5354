// Idempotency keys over HTTP: two instances of an Express payments API (two servers, two clients,
// as two pods behind a load balancer) share one `Idempotency-Key` store. A client retries a
// payment on both instances at once: the card is charged once, the duplicates that come while it
// runs get 409, later ones get the first response replayed, and the key reused with another body
// gets 422.
import { createHash } from 'node:crypto';
import { IdempotencyConflictError, IdempotencyInProgressError, LockClient } from '@holdfast/core';
import express from 'express';
import { connect, withRedis } from '../shared/redis.mjs';

/**
 * Express middleware: the route runs once per `Idempotency-Key`; its response (status, body,
 * headers it set) is replayed to every later request with the key (`Idempotent-Replayed: true`).
 */
function idempotent(locks, { header = 'idempotency-key', ttlMs = 86_400_000, waitMs = 0 } = {}) {
  const store = locks.idempotency('http', { ttlMs });
  return (handler) => async (req, res, next) => {
    const key = req.get(header);
    if (!key) return handler(req, res, next);
    const fingerprint = createHash('sha256').update(`${req.method} ${req.baseUrl}${req.route.path} ${JSON.stringify(req.body ?? null)}`).digest('hex');
    try {
      const { value, replayed } = await store.run(
        key,
        async () => {
          // The handler answers through `reply` instead of res.json(): what it answers is stored first.
          const answer = await handler(req);
          return { status: answer.status ?? 200, body: answer.body, headers: answer.headers ?? {} };
        },
        { fingerprint, waitMs },
      );
      res.status(value.status).set(value.headers);
      if (replayed) res.set('Idempotent-Replayed', 'true');
      res.json(value.body);
    } catch (error) {
      if (error instanceof IdempotencyConflictError) return res.status(422).json({ error: 'key reused with another request' });
      if (error instanceof IdempotencyInProgressError) return res.status(409).json({ error: 'request still running' });
      next(error);
    }
  };
}

await withRedis(async (url) => {
  let charges = 0;
  let charging;
  const charged = new Promise((resolve) => (charging = resolve));
  let answer;
  const network = new Promise((resolve) => (answer = resolve)); // the card network, answering when told
  const instances = await Promise.all(
    ['api-1', 'api-2'].map(async (name) => {
      const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
      const locks = new LockClient(redis, { prefix: `example-idem-${process.pid}` });
      const app = express();
      app.use(express.json());
      app.post(
        '/payments',
        idempotent(locks)(async (req) => {
          charges++;
          charging();
          await network;
          return { status: 201, body: { charged: req.body.amount, by: name, charge: `ch_${charges}` }, headers: { 'X-Instance': name } };
        }),
      );
      const server = await new Promise((resolve) => {
        const s = app.listen(0, '127.0.0.1', () => resolve(s));
      });
      return { name, redis, locks, server, base: `http://127.0.0.1:${server.address().port}` };
    }),
  );

  const pay = async (instance, key, body) => {
    const response = await fetch(`${instance.base}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });
    const replayed = response.headers.get('idempotent-replayed') === 'true';
    return `${response.status}${replayed ? ' (replayed)' : ''} ${JSON.stringify(await response.json())}`;
  };

  // A client retries at once, on both instances: one charge, the duplicates are told to wait.
  const first = pay(instances[0], 'order-42', { amount: 1999 });
  await charged;
  const duplicates = await Promise.all([pay(instances[1], 'order-42', { amount: 1999 }), pay(instances[0], 'order-42', { amount: 1999 })]);
  answer();
  console.log(`first:     ${await first}`);
  for (const d of duplicates) console.log(`duplicate: ${d}`);
  console.log(`retry:     ${await pay(instances[1], 'order-42', { amount: 1999 })}`);
  console.log(`other body: ${await pay(instances[1], 'order-42', { amount: 5 })}`);
  console.log(`charges: ${charges}`);

  for (const { locks, redis, server } of instances) {
    await new Promise((resolve) => server.close(resolve));
    await locks.close();
    redis.disconnect();
  }
});
