/**
 * Cluster mode after Garnet's model, spoken as Redis Cluster: the node's view of atoll-core's
 * {@link io.atoll.core.ClusterConfig} over 16384 slots ({@link
 * io.atoll.kv.internal.cluster.ClusterState}, one writer), the local migration marks, the text of
 * CLUSTER NODES/SLOTS/SHARDS/INFO, the cluster bus (gossip with merge-if-newer, PFAIL/FAIL), the
 * config file, and MIGRATE's client side. Not API.
 */
package io.atoll.kv.internal.cluster;
