/**
 * Atoll's testkit, API: {@link io.atoll.testkit.LocalCluster}, a real cluster in one JVM (a shard
 * manager and pods over gRPC on loopback), the conditions tests wait for
 * ({@link io.atoll.testkit.ClusterChecks}, {@link io.atoll.testkit.Await}) and a clock tests can
 * move ({@link io.atoll.testkit.VirtualTicker}). The JUnit 5 extension is in
 * {@code io.atoll.testkit.junit}, the fault-injecting TCP relay in {@code io.atoll.testkit.net},
 * the harness for clusters of real processes in {@code io.atoll.testkit.process}.
 */
package io.atoll.testkit;
