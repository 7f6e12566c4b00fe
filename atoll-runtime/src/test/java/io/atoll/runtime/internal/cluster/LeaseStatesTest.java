package io.atoll.runtime.internal.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The lease on a virtual clock: granted, renewed, lapsed, fenced, unfenced, revoked. */
class LeaseStatesTest {

  private static final long TTL = TimeUnit.SECONDS.toNanos(3);

  private final AtomicLong clock = new AtomicLong(1_000);
  private final Object guard = new Object();
  private final List<String> events = new ArrayList<>();
  private final Lease lease = new Lease(clock::get, false, guard, () -> "test-pod", new Lease.Callback() {
    @Override
    public void fence() {
      assertThat(Thread.holdsLock(guard)).as("fence runs under the guard").isTrue();
      events.add("fence");
    }

    @Override
    public void unfence() {
      assertThat(Thread.holdsLock(guard)).as("unfence runs under the guard").isTrue();
      events.add("unfence");
    }

    @Override
    public void extended() {
      assertThat(Thread.holdsLock(guard)).isFalse();
      events.add("extended");
    }

    @Override
    public void fenced() {
      assertThat(Thread.holdsLock(guard)).isFalse();
      events.add("fenced");
    }
  });

  private void advance(long nanos) {
    clock.addAndGet(nanos);
  }

  @Test
  void notGrantedUntilTheFirstRenewalAndNeverFencedBeforeIt() {
    assertThat(lease.granted()).isFalse();
    assertThat(lease.valid()).isFalse();
    assertThat(lease.renewedMillisAgo()).isEqualTo(-1);
    advance(TTL * 10);
    lease.check();
    assertThat(lease.fenced()).isFalse();
    assertThat(events).isEmpty();
  }

  @Test
  void aRenewalRunsFromItsSendTimeForOneLeaseLength() {
    long sent = clock.get();
    advance(TimeUnit.MILLISECONDS.toNanos(200)); // the answer took 200 ms
    lease.renewed(sent, TTL);
    assertThat(lease.granted()).isTrue();
    assertThat(lease.ttlNanos()).isEqualTo(TTL);
    assertThat(lease.valid(sent + TTL - 1)).isTrue();
    assertThat(lease.valid(sent + TTL)).as("counted from the send, not the answer").isFalse();
    assertThat(lease.renewedMillisAgo()).isZero();
    advance(TimeUnit.MILLISECONDS.toNanos(700));
    assertThat(lease.renewedMillisAgo()).isEqualTo(700);
    assertThat(events).containsExactly("extended");
  }

  @Test
  void aGrantAfterALapseOrARevocationStartsANewGeneration() {
    lease.renewed(clock.get(), TTL);
    assertThat(lease.generation()).isZero();
    advance(TTL / 3);
    lease.renewed(clock.get(), TTL);
    assertThat(lease.generation()).as("renewed in time: same generation").isZero();
    advance(TTL); // runs out, unnoticed by the check
    lease.renewed(clock.get(), TTL);
    assertThat(lease.generation()).as("renewed after it ran out").isEqualTo(1);
    synchronized (guard) {
      lease.revokeLocked();
    }
    lease.renewed(clock.get(), TTL);
    assertThat(lease.generation()).as("granted again after a revocation").isEqualTo(2);
  }

  @Test
  void neverShortened() {
    long t0 = clock.get();
    lease.renewed(t0, TTL);
    lease.extend(t0 + TTL / 2); // an older renewal answered late
    assertThat(lease.valid(t0 + TTL - 1)).isTrue();
  }

  @Test
  void lapsesAtItsDeadlineAndTheCheckFencesOnce() {
    lease.renewed(clock.get(), TTL);
    advance(TTL - 1);
    lease.check();
    assertThat(lease.valid()).isTrue();
    assertThat(lease.fenced()).isFalse();
    advance(1);
    assertThat(lease.valid()).as("invalid at once, before any check").isFalse();
    lease.check();
    lease.check();
    assertThat(lease.fenced()).isTrue();
    assertThat(events).containsExactly("extended", "fence", "fenced");
  }

  @Test
  void aRenewalAfterFencingServesAgain() {
    lease.renewed(clock.get(), TTL);
    advance(TTL);
    lease.check();
    long sent = clock.get();
    lease.renewed(sent, TTL);
    assertThat(lease.fenced()).isFalse();
    assertThat(lease.valid()).isTrue();
    assertThat(events).containsExactly("extended", "fence", "fenced", "unfence", "extended");
  }

  @Test
  void aRenewalSentBeforeTheLapseDoesNotUnfence() {
    long sent = clock.get();
    lease.renewed(sent, TTL);
    advance(TTL + 10);
    lease.check();
    lease.extend(sent + TTL); // a late answer to a renewal sent long ago: still in the past
    assertThat(lease.fenced()).isTrue();
    assertThat(events).doesNotContain("unfence");
  }

  @Test
  void aClosingPodIsNotUnfencedAndAClosedOneNotFenced() {
    lease.renewed(clock.get(), TTL);
    advance(TTL);
    lease.check();
    lease.closing();
    lease.renewed(clock.get(), TTL);
    assertThat(lease.fenced()).isTrue();

    Lease other = new Lease(clock::get, false, guard, () -> "other", new Lease.Callback() {
      @Override
      public void fence() {
        events.add("other-fence");
      }

      @Override
      public void unfence() {}

      @Override
      public void extended() {}

      @Override
      public void fenced() {}
    });
    other.renewed(clock.get(), TTL);
    other.closed();
    advance(TTL);
    other.check();
    assertThat(other.fenced()).isFalse();
    assertThat(events).doesNotContain("other-fence");
  }

  @Test
  void revokingEndsTheLeaseNowAndFences() {
    lease.renewed(clock.get(), TTL);
    synchronized (guard) {
      lease.revokeLocked();
    }
    assertThat(lease.valid()).isFalse();
    assertThat(lease.fenced()).isTrue();
    lease.renewed(clock.get(), TTL); // registered again
    assertThat(lease.fenced()).isFalse();
  }

  @Test
  void failuresAreCountedFromTheFirstAndClearedByASuccess() {
    lease.renewed(clock.get(), TTL);
    assertThat(lease.failing()).isFalse();
    lease.renewalFailed(clock.get());
    advance(100);
    lease.renewalFailed(clock.get());
    assertThat(lease.failing()).isTrue();
    lease.renewed(clock.get(), TTL);
    assertThat(lease.failing()).isFalse();
  }

  @Test
  void aClientsLeaseIsAlwaysValid() {
    Lease client = new Lease(clock::get, true, guard, () -> "client", null);
    assertThat(client.valid()).isTrue();
    advance(Long.MAX_VALUE / 2);
    assertThat(client.valid()).isTrue();
    client.check(); // never fences (and has no callback to call)
  }
}
