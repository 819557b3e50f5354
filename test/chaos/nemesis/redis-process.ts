import { sleep, type RedisServer } from '@holdfast/test-utils';
import { jitter, storm, type Nemesis } from './storm.js';

/** redis-server frozen (SIGSTOP) for `pauseMs`, again and again. */
export function redisHangStorm(server: RedisServer, pauseMs: number, min = 300, max = 800): Nemesis {
  return storm('redis SIGSTOP', jitter(min, max), async () => {
    server.pause();
    await sleep(pauseMs);
    server.resume();
  });
}

/**
 * redis-server SIGKILLed and restarted on the same port: with `persistent`
 * servers it comes back from its AOF (`appendfsync always`), otherwise empty.
 */
export function redisCrashStorm(server: RedisServer, min = 500, max = 1_000): Nemesis {
  return storm('redis SIGKILL + restart', jitter(min, max), () => server.restart());
}
