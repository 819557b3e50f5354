import { passFlavour } from './client-differences.js';
import { describeClusterContract } from './contract-cluster.js';

/**
 * The Cluster port contract (contract-cluster.ts) on a Cluster client of this pass: an ioredis
 * Cluster, or a node-redis createCluster() behind the harness's twin.
 */
describeClusterContract(passFlavour, (cluster, options) => cluster.client(options));
