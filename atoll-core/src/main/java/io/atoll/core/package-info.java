/**
 * The sharding model, pure: API.
 *
 * <p>Who is who ({@link io.atoll.core.PodAddress}, {@link io.atoll.core.PodId},
 * {@link io.atoll.core.Pod}, {@link io.atoll.core.PodVersion}), what is addressed
 * ({@link io.atoll.core.EntityAddress}, {@link io.atoll.core.ShardHasher}), and the table of who
 * owns what: {@link io.atoll.core.ClusterConfig}, immutable and versioned by epochs, with its
 * merge (a join semilattice, so gossip converges) and its compact binary form (encode, decode:
 * bounded, every count checked before it allocates). {@link io.atoll.core.FencingToken} and
 * {@link io.atoll.core.Ticker} are what a pod needs to fence stale work and to read time that
 * tests can move.
 *
 * <p>No threads, no I/O, no dependencies beyond the JDK: every type here is immutable or a pure
 * function and can be used from any thread. The wire form of a config (its codec) is
 * package-private; callers use {@link io.atoll.core.ClusterConfig#encode()} and
 * {@link io.atoll.core.ClusterConfig#decode(byte[])}.
 */
package io.atoll.core;
