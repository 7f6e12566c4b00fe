package io.atoll.kv.internal.managed;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The rule by which a KV node rides out a manager outage, on plain values: a virtual clock, and
 * probes that answer what each test says (the network side is {@code KvManagedTest}'s).
 */
class ManagerOutageTest {
  private static final long LEASE = TimeUnit.SECONDS.toNanos(3);
  private static final PodAddress M1 = new PodAddress("127.0.0.1", 7000);
  private static final PodAddress M2 = new PodAddress("127.0.0.1", 7001);
  private static final PodAddress PEER = new PodAddress("127.0.0.1", 17001);

  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private final NodeLease lease = new NodeLease(clock::get);
  private final Set<PodAddress> listening = new HashSet<>();
  private final Map<PodAddress, Long> peerRenewedAgo = new HashMap<>();
  private final List<PodAddress> peers = new ArrayList<>(List.of(PEER));
  /** Time each probe takes, by the node's clock. */
  private long probeNanos;

  private final ManagerOutage.Probes probes = new ManagerOutage.Probes() {
    @Override
    public boolean refused(PodAddress manager) {
      clock.addAndGet(probeNanos);
      return !listening.contains(manager);
    }

    @Override
    public long peerRenewedMillisAgo(PodAddress peer) {
      clock.addAndGet(probeNanos);
      return peerRenewedAgo.getOrDefault(peer, -1L);
    }
  };

  private ManagerOutage outage(List<PodAddress> managers) {
    return new ManagerOutage("node", clock::get, managers, true, lease, () -> peers, probes);
  }

  private void grantedAndThenFailing() {
    lease.renewed(clock.get(), LEASE);
    clock.addAndGet(LEASE / 3);
    lease.renewalFailed(clock.get());
  }

  @Test
  void aManagerThatRefusesEverywhereWhileNoPeerRenewsExtendsTheLeaseFromTheChecksStart() {
    grantedAndThenFailing();
    probeNanos = TimeUnit.MILLISECONDS.toNanos(200);
    peerRenewedAgo.put(PEER, 5_000L);
    ManagerOutage o = outage(List.of(M1, M2));
    long start = clock.get();
    assertThat(o.check()).isTrue();
    assertThat(o.managerDown()).isTrue();
    // Valid until start + lease, not (end of the check) + lease.
    clock.set(start + LEASE - 1);
    assertThat(lease.valid()).isTrue();
    clock.set(start + LEASE);
    assertThat(lease.valid()).isFalse();
    assertThat(lease.renewedMillisAgo()).as("an extension is not a renewal").isGreaterThanOrEqualTo(
        TimeUnit.NANOSECONDS.toMillis(LEASE + LEASE / 3));
  }

  @Test
  void anyManagerAddressThatAcceptsAConnectionMeansNoExtension() {
    grantedAndThenFailing();
    listening.add(M2); // a standby, or a frozen manager whose kernel still accepts
    long deadline = clock.get() - LEASE / 3 + LEASE;
    ManagerOutage o = outage(List.of(M1, M2));
    assertThat(o.check()).isFalse();
    assertThat(o.managerDown()).isFalse();
    clock.set(deadline);
    assertThat(lease.valid()).isFalse();
  }

  @Test
  void aPeerThatRenewedWithinARenewalPeriodMeansNoExtension() {
    grantedAndThenFailing();
    // Recent = a third of the lease plus a tenth: 1000 + 300 ms.
    peerRenewedAgo.put(PEER, 1_299L);
    ManagerOutage o = outage(List.of(M1));
    assertThat(o.check()).isFalse();
    peerRenewedAgo.put(PEER, 1_300L);
    assertThat(o.check()).isTrue();
  }

  @Test
  void aPeerThatDoesNotAnswerOrNeverRenewedDoesNotHoldItBack() {
    grantedAndThenFailing();
    peers.add(new PodAddress("127.0.0.1", 17002));
    peerRenewedAgo.put(PEER, -1L);
    assertThat(outage(List.of(M1)).check()).isTrue();
  }

  @Test
  void aLapsedLeaseIsNeverRevivedNorOneLapsingDuringTheCheck() {
    grantedAndThenFailing();
    ManagerOutage o = outage(List.of(M1));
    clock.addAndGet(LEASE); // ran out
    assertThat(o.check()).isFalse();
    assertThat(lease.valid()).isFalse();

    NodeLease fresh = new NodeLease(clock::get);
    fresh.renewed(clock.get(), LEASE);
    fresh.renewalFailed(clock.get());
    clock.addAndGet(LEASE - 100);
    probeNanos = 200; // the lease runs out while the check asks
    ManagerOutage late = new ManagerOutage("node", clock::get, List.of(M1), true, fresh, () -> peers, probes);
    assertThat(late.check()).isFalse();
    assertThat(fresh.valid()).isFalse();
  }

  @Test
  void aRevokedLeaseIsNotExtendedAndNeitherIsOneNeverGranted() {
    ManagerOutage o = outage(List.of(M1));
    assertThat(o.check()).as("never granted").isFalse();
    grantedAndThenFailing();
    lease.revoke();
    assertThat(o.check()).isFalse();
    assertThat(lease.valid()).isFalse();
  }

  @Test
  void aRenewalAnsweredAfterTheLeaseWasRevokedDoesNotReviveIt() {
    lease.renewed(clock.get(), LEASE);
    long sent = clock.get();
    lease.revoke(); // the node unregisters while a renewal sent at `sent` is still on its way
    lease.renewed(sent, LEASE);
    assertThat(lease.valid()).isFalse();
    assertThat(lease.serving()).isFalse();
    assertThat(outage(List.of(M1)).check()).isFalse();
  }

  @Test
  void anExtensionNeverShortensTheLease() {
    lease.renewed(clock.get(), LEASE);
    long deadline = clock.get() + LEASE;
    assertThat(lease.extend(clock.get() + 1)).isTrue();
    clock.set(deadline - 1);
    assertThat(lease.valid()).isTrue();
  }

  @Test
  void aSuccessfulRenewalEndsTheFailingState() {
    grantedAndThenFailing();
    assertThat(lease.failing()).isTrue();
    ManagerOutage o = outage(List.of(M1));
    assertThat(o.check()).isTrue();
    lease.renewed(clock.get(), LEASE);
    o.renewed();
    assertThat(lease.failing()).isFalse();
    assertThat(o.managerDown()).isFalse();
  }
}
