package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** A start of the journal that fails after it took the store's lease, on a virtual clock. */
class JournalStartFailureTest {

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();
  final CutStore handle = new CutStore(store);
  final List<ClusterConfig> installed = new ArrayList<>();
  final List<StoreConflictException> deposed = new ArrayList<>();

  Journal journal() {
    return new Journal(handle, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt, 2,
        installed::add, deposed::add);
  }

  @Test
  void aReleaseThatFailsTooIsKeptWithTheCause() {
    Journal j = journal();
    // The store goes away after the lease is taken: the start's save fails, and so does the release.
    Throwable t = catchThrowable(() -> loop.callAsLoop(() -> j.recover(c -> {
      handle.cut(true);
      return c;
    })));
    assertThat(t).isInstanceOf(StoreException.class).hasMessage("store unreachable (cut off)");
    assertThat(t.getSuppressed()).as("the failed release, kept with the cause").hasSize(1);
    assertThat(t.getSuppressed()[0]).isInstanceOf(StoreException.class).hasMessage("store unreachable (cut off)");
    assertThat(store.leader()).as("the lease could not be given back").isPresent();
  }

  @Test
  void aReleaseThatWorksGivesTheLeaseBackAtOnce() {
    store.failSaves(1, MemoryStore.Failure.BEFORE_WRITE);
    assertThatThrownBy(() -> loop.callAsLoop(() -> journal().recover(UnaryOperator.identity())))
        .isInstanceOf(StoreException.class).satisfies(e -> assertThat(e.getSuppressed()).isEmpty());
    assertThat(store.leader()).isEmpty();
    assertThat(installed).isEmpty();
  }
}
