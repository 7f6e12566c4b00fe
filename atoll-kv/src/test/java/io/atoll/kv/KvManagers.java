package io.atoll.kv;

import io.atoll.core.Ticker;
import io.atoll.core.allocation.AllocationStrategy;
import io.atoll.core.allocation.RebalanceLimits;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.WireSecurity;
import java.nio.file.Path;
import java.time.Duration;

/** A real shard manager in this JVM for managed KV nodes: one shard per slot, test timings. */
final class KvManagers {
  private KvManagers() {}

  /**
   * 16384 shards, {@code lease} and {@code margin}, pings 2 s, terminations 4 s, a periodic round
   * every 2 s (retries after 500 ms), no limit on the moves of a round.
   */
  static ManagerSettings settings(Duration lease, Duration margin) {
    return ManagerSettings.defaults().withNumberOfShards(16384)
        .withLease(lease, margin)
        .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(4))
        .withRebalanceIntervals(Duration.ofSeconds(2), Duration.ofMillis(500))
        .withAllocation(RebalanceLimits.UNLIMITED, AllocationStrategy.versionAware());
  }

  /** A manager on 127.0.0.1:{@code port} (0: any) with its file store in {@code store}, plaintext. */
  static ShardManager start(ManagerSettings settings, Path store, int port, ConfigSigner signer) {
    return ShardManager.start(settings, FileAssignmentStore.open(store), PodHealth.LEASE_ONLY, "127.0.0.1", port,
        Ticker.SYSTEM, new java.util.Random(), ManagerObserver.NONE, new ManagerSecurity(WireSecurity.PLAINTEXT,
            signer));
  }
}
