package io.atoll.manager;

import io.atoll.core.Ticker;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.PodHealth;
import io.atoll.core.spi.StoreException;
import io.atoll.manager.pods.GrpcPods;
import io.atoll.transport.grpc.security.ConfigSigner;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * The production assembly of a {@link ShardManager}, behind its public {@code start} methods: the
 * cluster's signing key read from the store, the loop and the threads for store writes and health
 * checks, the gRPC calls to pods; then the manager takes its term and listens. Stateless.
 */
final class ManagerStart {

  private ManagerStart() {}

  /** Refuses an advertised host that pods could not reach. */
  static void checkAdvertised(String advertiseHost) {
    if (advertiseHost == null || advertiseHost.isBlank()) {
      throw new IllegalArgumentException("advertised host: '" + advertiseHost + "' (expected: the address pods and"
          + " other managers reach this manager at)");
    }
    if (ShardManager.isWildcard(advertiseHost)) {
      throw new IllegalArgumentException("advertised host: " + advertiseHost + " is every address, not one to reach"
          + " (expected: an address pods and other managers reach this manager at)");
    }
  }

  /** Builds a manager on its own threads and starts it; the store is closed if anything fails. */
  static ShardManager begin(ManagerSettings settings, AssignmentStore store, PodHealth health, String host,
      int port, String advertiseHost, Ticker ticker, RandomGenerator random, ManagerObserver observer,
      ManagerSecurity given) {
    ManagerSecurity security;
    try {
      security = given.keyInStore() ? storedKey(store).map(given::withSigner).orElse(given) : given;
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    ExecutorLoop loop = new ExecutorLoop("atoll-manager");
    ExecutorService io = Executors.newSingleThreadExecutor(
        Thread.ofPlatform().name("atoll-manager-store").daemon().factory());
    ExecutorService blocking = Executors.newVirtualThreadPerTaskExecutor();
    ShardManager m = new ShardManager(settings, store, health,
        new GrpcPods(security.wire(), security.signer()), loop, io, blocking, ticker, random,
        () -> {
          loop.shutdown();
          io.shutdown();
          try {
            io.awaitTermination(5, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          blocking.shutdown();
        }, security);
    m.open(host, port, advertiseHost + ":" + port, observer);
    return m;
  }

  /**
   * The cluster's signing key the store holds, if any. Read before the store's lease is taken:
   * {@link Journal#recover} refuses the start if another manager stored another key meanwhile.
   */
  private static Optional<ConfigSigner> storedKey(AssignmentStore store) {
    return store.load().map(s -> ManagerState.decode(s.data()).signingKey()).filter(k -> !k.isEmpty())
        .map(k -> {
          try {
            return ConfigSigner.fromEncodedKey(k);
          } catch (IllegalArgumentException e) {
            throw new StoreException(store + ": the cluster's " + e.getMessage(), e);
          }
        });
  }
}
