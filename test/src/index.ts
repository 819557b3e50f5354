export { detectBackend } from './backend.js';
export type { RedisBackend } from './backend.js';
export { startRedis, startRedisServers } from './redis-server.js';
export { clusterClient, startRedisCluster } from './redis-cluster.js';
export { startRedisReplicaPair, waitForRole } from './redis-replication.js';
export type { RedisReplicaPair } from './redis-replication.js';
export { startRedisSentinel, SENTINEL_MASTER_NAME } from './redis-sentinel.js';
export type { RedisSentinel } from './redis-sentinel.js';
export type { RedisClusterFixture } from './redis-cluster.js';
export type { RedisServer, StartRedisOptions } from './redis-server.js';
export { sharedRedis, describeBackend } from './shared-redis.js';
export { FaultProxy } from './fault-proxy.js';
export { useProxiedServer, type ProxiedServer } from './proxied-server.js';
export { releasePort, reservePort } from './ports.js';
export { clientMode, nodeRedis, nodeRedisMajor } from './node-redis-twin.js';
export { glideConfig, glideProbe, glideTwin } from './glide-twin.js';
export type { GlideAddress, GlideConfig, GlideProbe } from './glide-twin.js';
export type { NodeRedisAny, NodeRedisPackage } from './node-redis-twin.js';
export type { ProxyTarget } from './fault-proxy.js';
export {
  waitFor,
  sleep,
  closedPort,
  uniqueName,
  blockEventLoop,
  commandStats,
  commandStatsDelta,
  activeHandleCount,
  activeResources,
} from './helpers.js';
export type { WaitForOptions } from './helpers.js';
export { lockFields, type LockReader } from './lock-fields.js';
export { probeForSecondHolders } from './lock-probes.js';
export { readmeAcl } from './readme-acl.js';
export { differentSlotNames, sameSlotNames } from './multi-names.js';
