import { sleep, type FaultProxy } from '@holdfast/test-utils';
import { jitter, storm, type Nemesis } from './storm.js';

/**
 * Network faults between the clients and Redis, through the loopback proxy:
 * each round picks latency, a short blackhole, a reset of every connection,
 * or a reply dropped after Redis applied the command.
 */
export function proxyStorm(proxy: FaultProxy, blackholeMs = 200): Nemesis {
  const faults = [
    async () => {
      proxy.setLatency(Math.floor(Math.random() * 40));
      await sleep(150);
      proxy.setLatency(0);
    },
    async () => {
      proxy.blackhole(true);
      await sleep(blackholeMs);
      proxy.blackhole(false);
      // Swallowed bytes leave a stream that can never line up again; a real
      // partition that lasts ends the same way, with the connection reset.
      proxy.resetAll();
    },
    async () => proxy.resetAll(),
    async () => {
      // Armed until the next reply: drops whichever command comes next.
      void proxy.dropNextReply();
    },
  ];
  return storm('proxy faults', jitter(100, 300), () => faults[Math.floor(Math.random() * faults.length)]!());
}
