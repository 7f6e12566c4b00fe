/**
 * Where shards should live: API.
 *
 * <p>{@link io.atoll.core.allocation.AllocationStrategy} decides one rebalance round as a pure
 * function of the config, the live pods and the {@link io.atoll.core.allocation.RebalanceLimits};
 * it returns {@link io.atoll.core.allocation.Move}s and changes nothing. Two strategies: the
 * version-aware one of the Shard Manager seed (the default) and a least-shard one after Akka's.
 * Their working state ({@code Loads}) and implementations are package-private.
 *
 * <p>{@link io.atoll.core.allocation.Allocations} (applying moves to a config) is public but only
 * this module's tests use it: the shard manager applies moves itself. Whether it stays API, moves
 * to the tests, or becomes the manager's one applier of moves is the manager's decision.
 */
package io.atoll.core.allocation;
