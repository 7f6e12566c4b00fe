package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link AssignmentStore} keeps, written once and run against each store:
 * subclass it and say how to open (and reopen) a fresh store.
 */
public abstract class AssignmentStoreContract {

  protected AssignmentStore store;

  /** Opens a store over fresh, empty storage. */
  protected abstract AssignmentStore openFresh() throws Exception;

  /** Closes {@code store} and opens the same storage again, as a restarted manager would. */
  protected abstract AssignmentStore reopen(AssignmentStore store) throws Exception;

  @BeforeEach
  void openStore() throws Exception {
    store = openFresh();
  }

  @AfterEach
  void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aFreshStoreHoldsNothing() {
    assertThat(store.load()).isEmpty();
  }

  @Test
  void loadReturnsExactlyTheLastSave() {
    assertThat(store.save(bytes("one"), 0)).isEqualTo(1);
    assertThat(store.save(bytes("two"), 1)).isEqualTo(2);
    AssignmentStore.Stored s = store.load().orElseThrow();
    assertThat(s.version()).isEqualTo(2);
    assertThat(s.data()).isEqualTo(bytes("two"));
  }

  @Test
  void aSaveWithAStaleVersionIsRefusedAndChangesNothing() {
    store.save(bytes("one"), 0);
    store.save(bytes("two"), 1);
    assertThatThrownBy(() -> store.save(bytes("stale"), 1))
        .isInstanceOf(StoreConflictException.class)
        .hasMessageContaining("expected: 1")
        .satisfies(e -> {
          StoreConflictException c = (StoreConflictException) e;
          assertThat(c.expected()).isEqualTo(1);
          assertThat(c.actual()).isEqualTo(2);
        });
    assertThat(store.load().orElseThrow().data()).isEqualTo(bytes("two"));
  }

  @Test
  void aSaveSurvivesReopening() throws Exception {
    byte[] big = new byte[1 << 20];
    new Random(7).nextBytes(big);
    store.save(big, 0);
    store = reopen(store);
    AssignmentStore.Stored s = store.load().orElseThrow();
    assertThat(s.version()).isEqualTo(1);
    assertThat(s.data()).isEqualTo(big);
    assertThat(store.save(bytes("after"), 1)).isEqualTo(2);
  }

  @Test
  void emptyDataIsAValidState() {
    store.save(new byte[0], 0);
    assertThat(store.load().orElseThrow().data()).isEmpty();
  }

  @Test
  void concurrentWritersWithTheSameVersionExactlyOneWins() throws Exception {
    store.save(bytes("base"), 0);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Long>> results = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        byte[] data = bytes("writer-" + i);
        Callable<Long> write = () -> {
          try {
            return store.save(data, 1);
          } catch (StoreConflictException e) {
            return -1L;
          }
        };
        results.add(pool.submit(write));
      }
      int winners = 0;
      for (Future<Long> f : results) {
        if (f.get() == 2L) {
          winners++;
        }
      }
      assertThat(winners).isEqualTo(1);
      assertThat(store.load().orElseThrow().version()).isEqualTo(2);
    } finally {
      pool.shutdownNow();
    }
  }
}
