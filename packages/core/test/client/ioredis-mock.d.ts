// ioredis-mock ships no types: typed as what it emulates (as @types/ioredis-mock types it), for
// ioredis-mock.test.ts.
declare module 'ioredis-mock' {
  import type { Cluster, Redis } from 'ioredis';

  const RedisMock: {
    new (options?: object): Redis;
    Cluster: new (nodes: string[]) => Cluster;
  };
  export default RedisMock;
}
