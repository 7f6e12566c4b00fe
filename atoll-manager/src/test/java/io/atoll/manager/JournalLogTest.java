package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.LeadershipTakenException;
import io.atoll.manager.round.Rounds;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * What the journal tells an operator, on a virtual clock: a start that must wait out the longer
 * leases of the previous term, a start refused because another manager leads, a store that can be
 * neither written nor read.
 */
class JournalLogTest {

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();

  Journal journal(AssignmentStore on, Duration ttl, Duration margin) {
    return new Journal(on, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt, 2, c -> {}, e -> {},
        ttl, margin, Journal.MAX_TOMBSTONES, Journal.MAX_PRUNED);
  }

  /** Starts and stops a term on {@code on} that grants leases of {@code ttl} and {@code margin}. */
  void term(AssignmentStore on, Duration ttl, Duration margin) {
    Journal j = journal(on, ttl, margin);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    loop.runAsLoop(j::close);
  }

  @Test
  void aStartAfterATermOfLongerLeasesWarnsThatItWaitsForThem() {
    Duration ttl = Duration.ofSeconds(1);
    Duration margin = Duration.ofMillis(200);
    String warning = "shard manager: the previous term granted leases of %d ms (+ %d ms margin), longer than this"
        + " manager's 1000 ms (+ 200 ms); it waits that long for pods that do not renew";
    try (LogLines log = new LogLines()) {
      MemoryStore same = new MemoryStore();
      term(same, ttl, margin);
      term(same, ttl, margin); // the same leases: nothing to wait for
      assertThat(log.of(Journal.class, "WARN")).isEmpty();
      MemoryStore longerTtl = new MemoryStore();
      term(longerTtl, Duration.ofSeconds(2), margin);
      term(longerTtl, ttl, margin);
      MemoryStore longerMargin = new MemoryStore();
      term(longerMargin, ttl, Duration.ofMillis(300));
      term(longerMargin, ttl, margin);
      assertThat(log.of(Journal.class, "WARN")).containsExactly(warning.formatted(2000, 200),
          warning.formatted(1000, 300));
    }
  }

  @Test
  void aStartWhileAnotherManagerLeadsIsRefusedNamingIt() {
    store.takeOver(); // "another manager", term 1
    AssignmentStore busy = (AssignmentStore) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {AssignmentStore.class}, (p, m, args) -> {
          if (m.getName().equals("tryAcquire")) {
            return Optional.empty(); // its lease is live
          }
          try {
            return m.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    Journal j = journal(busy, Duration.ofSeconds(1), Duration.ofMillis(200));
    assertThatThrownBy(() -> loop.callAsLoop(() -> j.recover(UnaryOperator.identity())))
        .isInstanceOfSatisfying(LeadershipTakenException.class, e -> assertThat(e.leader()).isPresent())
        .hasMessageContaining("another manager leads (another manager, term 1)");
  }

  @Test
  void aStoreThatCanBeNeitherWrittenNorReadIsWarnedWithTheCause() {
    CutStore handle = new CutStore(store);
    Journal j = journal(handle, Duration.ofSeconds(1), Duration.ofMillis(200));
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    try (LogLines log = new LogLines()) {
      handle.cut(true);
      CompletableFuture<ClusterConfig> f = loop.callAsLoop(() -> j.transition(c -> Rounds.join(c, JournalTest.A)));
      vt.advance(Duration.ofMillis(20));
      assertThat(f).isCompletedExceptionally();
      assertThat(log.of(Journal.class, "WARN")).containsExactly(
          "shard manager: saving the config failed: io.atoll.core.spi.StoreException: store unreachable (cut off)",
          "shard manager: the store cannot be read either: io.atoll.core.spi.StoreException: store unreachable"
              + " (cut off)");
    }
  }
}
