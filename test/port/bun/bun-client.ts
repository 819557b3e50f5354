import { RedisClient } from 'bun';
import type { Redis, RedisOptions } from 'ioredis';

/**
 * Bun's `RedisClient` for the port contract, made from the contract's ioredis-style options
 * (`host`/`port`, `db`, `username`/`password`, `enableOfflineQueue`; Bun has no key prefix and no
 * `stringNumbers`, and connects at its first command whatever `lazyConnect` says). `disconnect()`
 * closes it, as the contract closes its clients.
 */
export function bunClient(address: { host: string; port: number }, options: RedisOptions = {}, opened: (() => void)[] = []): Redis {
  const auth = options.username === undefined ? '' : `${encodeURIComponent(options.username)}:${encodeURIComponent(options.password ?? '')}@`;
  const url = `redis://${auth}${options.host ?? address.host}:${options.port ?? address.port}/${options.db ?? 0}`;
  const client = new RedisClient(url, options.enableOfflineQueue === false ? { enableOfflineQueue: false } : {});
  const close = () => client.close();
  Object.defineProperty(client, 'disconnect', { value: close });
  opened.push(close);
  return client as unknown as Redis;
}
