/**
 * Cluster mode after Garnet's model, spoken as Redis Cluster: the node's view of atoll-core's
 * {@link io.atoll.core.ClusterConfig} over 16384 slots ({@link
 * io.atoll.kv.internal.cluster.ClusterState}, one writer), the local migration marks, the text of
 * CLUSTER NODES/SLOTS/SHARDS/INFO, the cluster bus (gossip with merge-if-newer, PFAIL/FAIL), the
 * config file, MIGRATE's client side (with managed mode's hand-offs and returns), and, on a
 * hand-off's target, when keys left by an earlier hand-off go ({@link
 * io.atoll.kv.internal.cluster.Imports}). Not API.
 */
package io.atoll.kv.internal.cluster;
