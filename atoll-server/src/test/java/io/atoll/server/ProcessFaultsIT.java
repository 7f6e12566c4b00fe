package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.ShardHasher;
import io.atoll.server.demo.Audit;
import io.atoll.server.demo.Child;
import io.atoll.server.demo.Ledger;
import io.atoll.server.demo.Load;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults on real processes: a manager and three pods of the bank-account service, killed, paused
 * and restarted under load. After each, the load generator's own ledger is audited against the
 * database: no acknowledged deposit lost, no activation acting after a newer one of the same
 * account started, every balance equal to its deposits.
 */
class ProcessFaultsIT {

  static final Duration LEASE = Duration.ofSeconds(2);

  @TempDir
  Path dir;
  ProcessCluster cluster;
  Ledger ledger;
  Load load;

  @BeforeEach
  void start() throws Exception {
    cluster = new ProcessCluster(dir, LEASE);
    cluster.startManager(0);
    for (int i = 0; i < 3; i++) {
      cluster.startPod();
    }
    cluster.awaitOwned(3, Duration.ofSeconds(30));
    ledger = new Ledger();
    load = cluster.load(ledger);
    awaitAcked(1000);
  }

  @AfterEach
  void stop() throws Exception {
    if (load != null) {
      load.stop(15_000);
    }
    cluster.close();
  }

  private void awaitAcked(long more) {
    long target = ledger.ackedCount() + more;
    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
        .until(() -> ledger.ackedCount() >= target);
  }

  private Audit finish() throws Exception {
    load.stop(15_000);
    load = null;
    Audit a = Audit.of(ledger, cluster.url);
    System.out.println("audit: " + a);
    return a;
  }

  private PodId podAt(Child pod) throws Exception {
    return cluster.client().config().activePods().stream().map(p -> p.id())
        .filter(id -> {
          try {
            return id.address().equals(pod.addressIfUp());
          } catch (java.io.IOException e) {
            return false;
          }
        }).findFirst().orElseThrow();
  }

  private void assertClean(Audit a) throws Exception {
    assertThat(a.lost()).as("acknowledged deposits missing from the database").isZero();
    assertThat(a.duplicateActivations()).as("older activations starting work after a newer one started:%n%s",
        Audit.fencedWritesReport(cluster.url)).isZero();
    assertThat(a.duplicateDeposits()).as("deposits delivered twice (refused by op id)").isZero();
    assertThat(a.unbalancedAccounts()).as("accounts whose balance differs from their deposits").isZero();
    assertThat(a.staleReads()).as("balance reads missing an acknowledged deposit").isZero();
    assertThat(a.acknowledged()).isPositive();
  }

  @Test
  void aKilledPodsShardsMoveOnlyAfterItsLeaseAndNothingIsLostOrLiveTwice() throws Exception {
    Child victim = cluster.pods.get(1);
    PodId id = podAt(victim);
    long killed = System.nanoTime();
    victim.kill();
    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() ->
        cluster.client().config().pod(id).map(e -> e.status() == PodStatus.GONE).orElse(false));
    long movedAfter = System.nanoTime() - killed;
    // The manager may have granted its last renewal up to a third of a lease before the kill; it
    // must then wait the lease and the margin (1 s here).
    assertThat(movedAfter).as("shards moved before the dead pod's lease and margin ran out")
        .isGreaterThanOrEqualTo(LEASE.toNanos() * 2 / 3 + Duration.ofSeconds(1).toNanos());
    cluster.awaitOwned(2, Duration.ofSeconds(30));
    awaitAcked(2000);
    assertClean(finish());
  }

  @Test
  void withTheManagerKilledKnownShardsAreServedNewOnesWaitAndARestartedManagerResumes() throws Exception {
    int port = cluster.managerAddress.port();
    cluster.manager.kill();
    // Twice the lease later, the pods still serve: deposits keep being acknowledged.
    long before = ledger.ackedCount();
    long killedAt = System.nanoTime();
    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() ->
        System.nanoTime() - killedAt > LEASE.multipliedBy(2).toNanos() && ledger.ackedCount() > before + 1000);
    for (Child p : cluster.pods) {
      assertThat(p.logText()).doesNotContain("self-fencing");
    }
    // A pod dies while no manager can move its shards: messages for them wait.
    Child victim = cluster.pods.get(2);
    PodId victimId = podAt(victim);
    ClusterConfig view = cluster.client().config();
    Set<Integer> orphaned = Set.copyOf(view.positionsByOwner().get(victimId).stream().map(p -> p + 1).toList());
    long failedBefore = ledger.failedCount();
    victim.kill();
    // The client notices the death when the deposits it had in flight there fail.
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> ledger.failedCount() > failedBefore);
    String orphan = null;
    for (int i = 0; orphan == null; i++) {
      if (orphaned.contains(ShardHasher.DEFAULT.shardOf("orphan-" + i, view.size()))) {
        orphan = "orphan-" + i;
      }
    }
    var waiting = cluster.client().entity(io.atoll.server.demo.Account.TYPE, orphan)
        .<Long>ask(io.atoll.server.demo.AccountMsg.Balance::new, Duration.ofSeconds(60)).toCompletableFuture();
    Awaitility.await("a message for a shard nobody can serve waits").during(LEASE.multipliedBy(2))
        .atMost(LEASE.multipliedBy(2).plusSeconds(5)).until(() -> !waiting.isDone());
    // An ask to the stopped pod's entity that cannot wait that long gets a clear error.
    String orphanId = orphan;
    var impatient = cluster.client().entity(io.atoll.server.demo.Account.TYPE, orphanId)
        .<Long>ask(io.atoll.server.demo.AccountMsg.Balance::new, Duration.ofSeconds(1)).toCompletableFuture();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> impatient.get(10, TimeUnit.SECONDS)).cause()
        .isInstanceOfSatisfying(io.atoll.runtime.DeliveryException.class, e -> {
          assertThat(e.reason()).isEqualTo(io.atoll.runtime.DeliveryException.Reason.TIMEOUT);
          assertThat(e).hasMessageContaining("account/" + orphanId).hasMessageContaining("timed out after")
              .hasMessageContaining("shard");
        });
    // The manager comes back on the same port and data: it resumes, and moves the dead pod's shards.
    cluster.startManager(port);
    assertThat(cluster.manager.logText()).contains("term 2");
    assertThat(waiting.get(30, TimeUnit.SECONDS)).isZero();
    cluster.awaitOwned(2, Duration.ofSeconds(30));
    awaitAcked(1000);
    assertClean(finish());
  }

  @Test
  void aPodPausedLongerThanItsLeaseHasFencedItselfWhenItWakesAndNothingRunsTwice() throws Exception {
    Child sleeper = cluster.pods.get(0);
    PodId id = podAt(sleeper);
    sleeper.pause();
    try {
      Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() ->
          cluster.client().config().pod(id).map(e -> e.status() == PodStatus.GONE).orElse(false));
      cluster.awaitOwned(2, Duration.ofSeconds(30));
      awaitAcked(1000); // the others serve its accounts now
    } finally {
      sleeper.resume();
    }
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> sleeper.logText().contains("self-fencing")
        || sleeper.logText().contains("joining again as a new incarnation"));
    // It comes back as a new incarnation and gets shards again.
    cluster.awaitOwned(3, Duration.ofSeconds(30));
    awaitAcked(2000);
    Audit a = finish();
    assertClean(a);
  }

  @Test
  void restartingEveryPodOneAtATimeUnderLoadLosesNothing() throws Exception {
    for (int i = 0; i < 3; i++) {
      Child old = cluster.pods.get(i);
      old.terminate();
      assertThat(old.awaitExit(Duration.ofSeconds(30))).as("%s stopped gracefully", old.name).isIn(0, 143);
      cluster.pods.set(i, cluster.startPod());
      cluster.pods.remove(cluster.pods.size() - 1);
      cluster.awaitOwned(3, Duration.ofSeconds(30));
      awaitAcked(500);
    }
    Audit a = finish();
    assertClean(a);
    assertThat(a.unacknowledged()).as("deposits that failed during graceful restarts").isZero();
  }
}
