/**
 * The Pekko Cluster Sharding peer of the cluster load generator, for the side-by-side figures of
 * docs/benchmarks.md. Pekko is used in this module only. Not API.
 */
package io.atoll.bench.pekko;
