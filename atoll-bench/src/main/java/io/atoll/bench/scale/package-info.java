/**
 * The scale simulator: the real shard manager (its rounds, its journal on the file store, its
 * signed configs over gRPC) with hundreds to thousands of simulated pods in one JVM. A simulated
 * pod is a gRPC server answering the manager's calls and a client of the manager's service
 * (register, renew, watch), with no entities; what it measures is the manager's work and what
 * every pod receives.
 */
package io.atoll.bench.scale;
