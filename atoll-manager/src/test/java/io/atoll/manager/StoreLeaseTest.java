package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StaleTermException;
import io.atoll.core.spi.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The term's lease in the store on a virtual clock: how long it is surely live, renewals, back-off, pauses. */
class StoreLeaseTest {

  static final long MS = 1_000_000L;

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  /** The virtual clock's start; times below are milliseconds after it. */
  final long t0 = vt.nanoTime();
  final MemoryStore memory = new MemoryStore();
  final List<Long> renewals = new ArrayList<>();
  volatile boolean unreachable;
  /** Renewals answered "not yours" while the store names no leader (a lease that expired there). */
  volatile boolean expiredWithoutLeader;
  final List<StaleTermException> lost = new ArrayList<>();
  /** The lease the last {@link #lease} acquired. */
  AssignmentStore.Lease granted;

  /** The memory store, recording when each renewal arrives and failing them while unreachable. */
  final AssignmentStore store = new AssignmentStore() {
    @Override
    public Optional<Stored> load() {
      return memory.load();
    }

    @Override
    public long save(byte[] data, long term, long expectedVersion) {
      return memory.save(data, term, expectedVersion);
    }

    @Override
    public Watch watch(long afterVersion, Consumer<Stored> onChange) {
      return memory.watch(afterVersion, onChange);
    }

    @Override
    public Optional<Lease> tryAcquire(String holder, Duration ttl) {
      return memory.tryAcquire(holder, ttl);
    }

    @Override
    public boolean renew(Lease lease) {
      renewals.add((vt.nanoTime() - t0) / MS);
      if (unreachable) {
        throw new StoreException("store unreachable (injected)");
      }
      return !expiredWithoutLeader && memory.renew(lease);
    }

    @Override
    public void release(Lease lease) {
      memory.release(lease);
    }

    @Override
    public Optional<Leader> leader() {
      return expiredWithoutLeader ? Optional.empty() : memory.leader();
    }

    @Override
    public void close() {}
  };

  /** A lease of {@code ttl} acquired now; renewals reach the store after {@code ioMillis}. */
  StoreLease lease(Duration ttl, long ioMillis) {
    StoreLease l = new StoreLease(store, vt.executor(ioMillis * MS, () -> true), loop, vt, lost::add);
    granted = store.tryAcquire("m", ttl).orElseThrow();
    loop.runAsLoop(() -> l.acquired(granted, vt.nanoTime(), ttl));
    return l;
  }

  boolean leads(StoreLease l) {
    boolean[] out = new boolean[1];
    loop.runAsLoop(() -> out[0] = l.leads(vt.nanoTime()));
    return out[0];
  }

  void at(long millis) {
    vt.advance(Duration.ofNanos(t0 + millis * MS - vt.nanoTime()));
  }

  @Test
  void theLeaseIsSurelyLiveForItsTtlFromTheSendOfTheLastRequestThatSucceeded() {
    StoreLease l = lease(Duration.ofMillis(900), 1);
    assertThat(l.ttlNanos()).isEqualTo(900 * MS);
    at(900);
    assertThat(leads(l)).isTrue();
    vt.advance(Duration.ofNanos(1));
    assertThat(leads(l)).isFalse();
    loop.runAsLoop(l::renew); // sent at 900 ms + 1 ns, answered 1 ms later
    vt.advance(Duration.ofMillis(2));
    assertThat(leads(l)).isTrue();
    at(1800);
    vt.advance(Duration.ofNanos(1));
    assertThat(leads(l)).isTrue();
    vt.advance(Duration.ofNanos(1));
    assertThat(leads(l)).isFalse();
    assertThat(lost).isEmpty();
  }

  @Test
  void failedRenewalsAreRetriedAfter100MsDoublingUpToAThirdOfTheLeaseAndSuccessResetsTheBackOff() {
    StoreLease l = lease(Duration.ofMillis(900), 1);
    unreachable = true;
    loop.runAsLoop(l::renew);
    at(2000);
    // each reaches the store 1 ms after it is sent; retried 100 ms after the first failure, then
    // 200, then 400 capped at a third of the lease (300), then 300 each
    assertThat(renewals).containsExactly(1L, 102L, 303L, 604L, 905L, 1206L, 1507L, 1808L);
    assertThat(leads(l)).as("900 ms since the last success was sent").isFalse();
    unreachable = false;
    at(2200); // the retry sent at 2108 succeeds
    assertThat(renewals).endsWith(2109L);
    assertThat(leads(l)).isTrue();
    unreachable = true;
    renewals.clear();
    loop.runAsLoop(l::renew);
    at(2600);
    assertThat(renewals).as("the back-off starts again at 100 ms").containsExactly(2201L, 2302L, 2503L);
    assertThat(lost).isEmpty();
  }

  /** What an operator reads of a store outage: each failed renewal, the stop of grants once, the recovery. */
  @Test
  void anOutageIsLoggedRenewalByRenewalTheStopOfGrantsOnceAndTheRecovery() {
    try (LogLines log = new LogLines()) {
      StoreLease l = lease(Duration.ofMillis(900), 1);
      loop.runAsLoop(l::renew); // an ordinary renewal: nothing to tell
      at(50);
      unreachable = true;
      loop.runAsLoop(l::renew);
      at(1000); // failures at 51, 152, 353, 654, 955
      assertThat(leads(l)).isFalse();
      assertThat(leads(l)).isFalse();
      unreachable = false;
      at(1300); // the retry sent at 1255 succeeds
      assertThat(leads(l)).isTrue();
      at(1400);
      loop.runAsLoop(l::stalled); // a pause: grants stop until the renewal it sends succeeds
      assertThat(leads(l)).isFalse();
      at(1410);
      assertThat(leads(l)).isTrue();
      String failed = "shard manager term 1: renewing the store lease failed (%d in a row; retry in %d ms): "
          + "io.atoll.core.spi.StoreException: store unreachable (injected)";
      assertThat(log.of(StoreLease.class, "WARN")).containsExactly(failed.formatted(1, 100), failed.formatted(2, 200),
          failed.formatted(3, 300), failed.formatted(4, 300), failed.formatted(5, 300),
          "shard manager term 1: the store lease was last renewed 1000 ms ago (sent), the lease is 900 ms; no pod"
              + " lease is granted or renewed until a renewal succeeds",
          "shard manager term 1: the store lease was last renewed 145 ms ago (sent), the lease is 900 ms, and the"
              + " manager was paused; no pod lease is granted or renewed until a renewal succeeds");
      assertThat(log.of(StoreLease.class, "INFO")).containsExactly(
          "shard manager term 1: the store lease is renewed again; granting pod leases",
          "shard manager term 1: the store lease is renewed again; granting pod leases");
    }
  }

  @Test
  void aLostLeaseIsLoggedWithTheTermThatTookIt() {
    try (LogLines log = new LogLines()) {
      StoreLease l = lease(Duration.ofMillis(900), 1);
      memory.takeOver();
      loop.runAsLoop(l::renew);
      at(10);
      assertThat(log.of(StoreLease.class, "ERROR")).containsExactly(
          "shard manager term 1 is deposed: its lease was lost (term 2 was granted)");
    }
  }

  @Test
  void aRenewalThatFindsAnotherTermReportsTheLossWithThatTerm() {
    StoreLease l = lease(Duration.ofMillis(900), 1);
    memory.takeOver();
    loop.runAsLoop(l::renew);
    at(10);
    assertThat(lost).hasSize(1);
    assertThat(lost.get(0).getMessage()).contains("2");
  }

  @Test
  void afterAPauseNothingIsGrantedUntilARenewalSentAfterItSucceeds() {
    StoreLease l = lease(Duration.ofMillis(900), 1);
    at(100);
    loop.runAsLoop(l::stalled); // sends a renewal at once, answered at 101
    assertThat(leads(l)).isFalse();
    vt.advance(Duration.ofNanos(MS + MS / 2));
    assertThat(leads(l)).as("the renewal sent at the pause").isTrue();
    assertThat(renewals).containsExactly(101L);
  }

  @Test
  void aRenewalInFlightDuringAPauseProvesNothingAndAnotherIsSent() {
    StoreLease l = lease(Duration.ofMillis(900), 5);
    at(100);
    loop.runAsLoop(l::renew); // sent at 100, answered at 105
    at(102);
    loop.runAsLoop(l::stalled); // one in flight: none sent now
    at(105);
    assertThat(renewals).containsExactly(105L);
    assertThat(leads(l)).isFalse();
    at(111);
    assertThat(renewals).containsExactly(105L, 110L);
    assertThat(leads(l)).isTrue();
  }

  @Test
  void aClosedLeaseLeadsNoMoreAndRenewsNoMore() {
    StoreLease l = lease(Duration.ofMillis(900), 1);
    loop.runAsLoop(l::close);
    assertThat(leads(l)).isFalse();
    loop.runAsLoop(l::renew);
    loop.runAsLoop(l::stalled);
    at(500);
    assertThat(renewals).isEmpty();
  }

  @Test
  void aRenewalRefusedWhileNoLeaderIsNamedReportsTheLossAsTheNextTerm() {
    StoreLease l = lease(Duration.ofMillis(900), 1);
    long term = memory.leader().orElseThrow().term();
    expiredWithoutLeader = true; // the lease expired in the store and nobody took it yet
    loop.runAsLoop(l::renew);
    at(10);
    assertThat(lost).hasSize(1);
    assertThat(lost.get(0).term()).isEqualTo(term);
    assertThat(lost.get(0).currentTerm()).as("some later term may be granted any time").isEqualTo(term + 1);
  }

  @Test
  void aRenewalSentBeforeALaterAcquireNeverMovesTheSendTimeBack() {
    StoreLease l = lease(Duration.ofMillis(900), 5);
    at(100);
    loop.runAsLoop(l::renew); // sent at 100, answered at 105
    at(102);
    loop.runAsLoop(() -> l.acquired(granted, vt.nanoTime(), Duration.ofMillis(900))); // the same term, sent at 102
    at(106);
    at(1002);
    assertThat(leads(l)).as("surely live until 102 + 900 ms, not 100 + 900").isTrue();
    vt.advance(Duration.ofNanos(1));
    assertThat(leads(l)).isFalse();
  }

  @Test
  void itsMethodsRefuseCallersOffTheLoop() {
    StoreLease l = lease(Duration.ofMillis(900), 1);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> l.acquired(granted, vt.nanoTime(), Duration.ofMillis(900)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("expected: the manager's loop");
    org.assertj.core.api.Assertions.assertThatThrownBy(l::renew).isInstanceOf(IllegalStateException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> l.leads(vt.nanoTime()))
        .isInstanceOf(IllegalStateException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(l::stalled).isInstanceOf(IllegalStateException.class);
    at(100);
    assertThat(renewals).as("nothing was sent").isEmpty();
    assertThat(leads(l)).isTrue();
  }
}
