/**
 * The cluster load generator, not API: {@link io.atoll.bench.cluster.ClusterBench} (the command
 * and its scenarios), {@code BenchCluster} (a manager, pod JVMs and pods in this JVM, closed
 * together), {@code Loads} (the measured loads), {@code ScaleOut} (the same loads against 1 to 3
 * pods), {@link io.atoll.bench.cluster.BenchPod} (a pod JVM) and
 * {@link io.atoll.bench.cluster.BenchCounter} (the entity).
 */
package io.atoll.bench.cluster;
