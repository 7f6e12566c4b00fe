/**
 * The shard manager. API: {@link io.atoll.manager.ShardManager} (start, stop, rebalance, the
 * installed config), {@link io.atoll.manager.ManagerSettings} and
 * {@link io.atoll.manager.ManagerState} (what the store holds). Everything else here is
 * package-private: the loop and its rooms — the write-ahead {@code Journal}, the {@code Membership} and its {@code Leases},
 * the {@code Rebalancer} workflow, the {@code Watchers} and the gRPC {@code ManagerService}.
 *
 * <p>Imports run one way: this package uses {@link io.atoll.manager.round} (pure decisions) and
 * {@link io.atoll.manager.pods} (the port to pods); neither imports this one.
 */
package io.atoll.manager;
