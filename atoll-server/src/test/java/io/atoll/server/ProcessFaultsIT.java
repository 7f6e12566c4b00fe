package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.ShardHasher;
import io.atoll.core.PodAddress;
import io.atoll.runtime.Sharding;
import io.atoll.server.chaos.FreezeLog;
import io.atoll.server.demo.AccountDb;
import io.atoll.server.demo.ActivationLog;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.demo.Audit;
import io.atoll.server.demo.Ledger;
import io.atoll.server.demo.Load;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.h2.tools.Server;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
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
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir, () -> this.processes);
  ProcessCluster processes;
  Server db;
  String url;
  ManagedProcess manager;
  PodAddress managerAddress;
  final List<ManagedProcess> pods = new ArrayList<>();
  Sharding client;
  int managers;
  int podCount;
  Ledger ledger;
  Load load;
  /** When pods were frozen, for the audit's one excuse. */
  final FreezeLog freezes = new FreezeLog();

  @BeforeEach
  void start() throws Exception {
    processes = new ProcessCluster(dir, Duration.ZERO); // torn down with kill -9, as the faults are
    System.setProperty("h2.bindAddress", "127.0.0.1");
    db = Server.createTcpServer("-tcpPort", "0", "-ifNotExists", "-baseDir", dir.resolve("db").toString()).start();
    url = "jdbc:h2:tcp://127.0.0.1:" + db.getPort() + "/accounts";
    AccountDb.createSchema(url);
    startManager(0);
    for (int i = 0; i < 3; i++) {
      startPod();
    }
    client = Sharding.builder().manager(managerAddress.toString()).clientOnly()
        .sendTimeout(Duration.ofSeconds(10)).askTimeout(Duration.ofSeconds(10)).start();
    awaitOwned(3);
    ledger = new Ledger();
    load = new Load(client, ledger, 300, 32, 1).start();
    awaitAcked(1000);
  }

  @AfterEach
  void stop() throws Exception {
    if (load != null) {
      load.stop(15_000);
    }
    if (client != null) {
      client.close();
    }
    processes.close();
    if (db != null) {
      db.stop();
    }
  }

  private void startManager(int port) {
    manager = processes.start(AtollProcesses.atoll("manager-" + (++managers), List.of("manager", "--port",
        Integer.toString(port), "--data-dir", dir.resolve("manager").toString(), "--shards", "60", "--lease",
        LEASE.toMillis() + "ms", "--lease-margin", "1s", "--rebalance-interval", "5s", "--rebalance-retry", "1s",
        "--ping-timeout", "1s", "--termination-timeout", "2s")));
    managerAddress = manager.awaitAddress(Duration.ofSeconds(60));
  }

  private ManagedProcess startPod() {
    ManagedProcess p = processes.start(AtollProcesses.atoll("pod-" + (++podCount), List.of("pod", "--manager",
        managerAddress.toString(), "--db", url, "--termination-timeout", "2s", "--send-timeout", "10s")));
    p.awaitAddress(Duration.ofSeconds(60));
    pods.add(p);
    return p;
  }

  /** Waits until {@code activePods} active pods own every shard, as the client sees it. */
  private void awaitOwned(int activePods) {
    ClusterChecks.awaitEveryShardOwned(client, activePods, Duration.ofSeconds(30));
  }

  private void awaitAcked(long more) {
    long target = ledger.ackedCount() + more;
    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
        .until(() -> ledger.ackedCount() >= target);
  }

  private Audit finish() throws Exception {
    load.stop(15_000);
    load = null;
    Audit a = Audit.of(ledger, url, ActivationLog.check(url, freezes));
    System.out.println("audit: " + a);
    return a;
  }

  private PodId podAt(ManagedProcess pod) {
    PodAddress address = pod.addressIfUp().orElseThrow();
    return client.config().activePods().stream().map(p -> p.id())
        .filter(id -> id.address().equals(address)).findFirst().orElseThrow();
  }

  private void assertClean(Audit a) throws Exception {
    assertThat(a.lost()).as("acknowledged deposits missing from the database").isZero();
    assertThat(a.duplicateActivations()).as("older activations starting work after a newer one started:%n%s",
        Audit.fencedWritesReport(url)).isZero();
    assertThat(a.duplicateDeposits()).as("deposits delivered twice (refused by op id)").isZero();
    assertThat(a.unbalancedAccounts()).as("accounts whose balance differs from their deposits").isZero();
    assertThat(a.staleReads()).as("balance reads missing an acknowledged deposit").isZero();
    assertThat(a.acknowledged()).isPositive();
  }

  @Test
  void aKilledPodsShardsMoveOnlyAfterItsLeaseAndNothingIsLostOrLiveTwice() throws Exception {
    ManagedProcess victim = pods.get(1);
    PodId id = podAt(victim);
    long killed = System.nanoTime();
    victim.kill();
    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() ->
        client.config().pod(id).map(e -> e.status() == PodStatus.GONE).orElse(false));
    long movedAfter = System.nanoTime() - killed;
    // The manager may have granted its last renewal up to a third of a lease before the kill; it
    // must then wait the lease and the margin (1 s here).
    assertThat(movedAfter).as("shards moved before the dead pod's lease and margin ran out")
        .isGreaterThanOrEqualTo(LEASE.toNanos() * 2 / 3 + Duration.ofSeconds(1).toNanos());
    awaitOwned(2);
    awaitAcked(2000);
    assertClean(finish());
  }

  @Test
  void withTheManagerKilledKnownShardsAreServedNewOnesWaitAndARestartedManagerResumes() throws Exception {
    int port = managerAddress.port();
    manager.kill();
    // Twice the lease later, the pods still serve: deposits keep being acknowledged.
    long before = ledger.ackedCount();
    long killedAt = System.nanoTime();
    Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() ->
        System.nanoTime() - killedAt > LEASE.multipliedBy(2).toNanos() && ledger.ackedCount() > before + 1000);
    for (ManagedProcess p : pods) {
      assertThat(p.logText()).doesNotContain("self-fencing");
    }
    // A pod dies while no manager can move its shards: messages for them wait.
    ManagedProcess victim = pods.get(2);
    PodId victimId = podAt(victim);
    ClusterConfig view = client.config();
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
    var waiting = client.entity(io.atoll.server.demo.Account.TYPE, orphan)
        .<Long>ask(io.atoll.server.demo.AccountMsg.Balance::new, Duration.ofSeconds(60)).toCompletableFuture();
    Awaitility.await("a message for a shard nobody can serve waits").during(LEASE.multipliedBy(2))
        .atMost(LEASE.multipliedBy(2).plusSeconds(5)).until(() -> !waiting.isDone());
    // An ask to the stopped pod's entity that cannot wait that long gets a clear error.
    String orphanId = orphan;
    var impatient = client.entity(io.atoll.server.demo.Account.TYPE, orphanId)
        .<Long>ask(io.atoll.server.demo.AccountMsg.Balance::new, Duration.ofSeconds(1)).toCompletableFuture();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> impatient.get(10, TimeUnit.SECONDS)).cause()
        .isInstanceOfSatisfying(io.atoll.runtime.DeliveryException.class, e -> {
          assertThat(e.reason()).isEqualTo(io.atoll.runtime.DeliveryException.Reason.TIMEOUT);
          assertThat(e).hasMessageContaining("account/" + orphanId).hasMessageContaining("timed out after")
              .hasMessageContaining("shard");
        });
    // The manager comes back on the same port and data: it resumes, and moves the dead pod's shards.
    startManager(port);
    assertThat(manager.logText()).contains("term 2");
    assertThat(waiting.get(30, TimeUnit.SECONDS)).isZero();
    awaitOwned(2);
    awaitAcked(1000);
    assertClean(finish());
  }

  @Test
  void aPodPausedLongerThanItsLeaseHasFencedItselfWhenItWakesAndNothingRunsTwice() throws Exception {
    ManagedProcess sleeper = pods.get(0);
    PodId id = podAt(sleeper);
    ClusterConfig view = client.config();
    Set<Integer> itsShards = Set.copyOf(view.positionsByOwner().get(id).stream().map(p -> p + 1).toList());
    String account = null;
    for (int i = 0; account == null; i++) {
      if (itsShards.contains(ShardHasher.DEFAULT.shardOf("frozen-" + i, view.size()))) {
        account = "frozen-" + i;
      }
    }
    sleeper.pause();
    long frozenSince = AccountDb.nowMicros(); // read after the signal: the freeze began no later
    try {
      // Sent to the frozen pod: it waits there, unanswered.
      var stuck = client.entity(io.atoll.server.demo.Account.TYPE, account)
          .<Long>ask(io.atoll.server.demo.AccountMsg.Balance::new, Duration.ofSeconds(60)).toCompletableFuture();
      Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() ->
          client.config().pod(id).map(e -> e.status() == PodStatus.GONE).orElse(false));
      // Once the pod is declared dead its lease has run out: nothing sent to it is still due to run
      // there. The ask fails as outcome unknown at once, not when the pod thaws (it is still frozen).
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> stuck.get(5, TimeUnit.SECONDS)).cause()
          .isInstanceOfSatisfying(io.atoll.runtime.DeliveryException.class, e -> {
            assertThat(e.reason()).isEqualTo(io.atoll.runtime.DeliveryException.Reason.OUTCOME_UNKNOWN);
            assertThat(e).hasMessageContaining("no longer a member");
          });
      // and the account's new owner serves it while the old one is still frozen.
      assertThat(client.entity(io.atoll.server.demo.Account.TYPE, account)
          .<Long>ask(io.atoll.server.demo.AccountMsg.Balance::new, Duration.ofSeconds(10)).toCompletableFuture()
          .get(15, TimeUnit.SECONDS)).isZero();
      awaitOwned(2);
      awaitAcked(1000); // the others serve its accounts now
    } finally {
      long thawed = AccountDb.nowMicros(); // read before the signal: it ran nothing before it
      sleeper.resume();
      // The audit excuses the one handler a freeze between its lease check and its first line
      // lets start late, as the chaos run does (ActivationLog, "started late"); nothing else.
      freezes.frozen(id.address().toString(), frozenSince, thawed);
    }
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> sleeper.logText().contains("self-fencing")
        || sleeper.logText().contains("joining again as a new incarnation"));
    // It comes back as a new incarnation and gets shards again.
    awaitOwned(3);
    awaitAcked(2000);
    Audit a = finish();
    assertClean(a);
  }

  @Test
  void restartingEveryPodOneAtATimeUnderLoadLosesNothing() throws Exception {
    for (int i = 0; i < 3; i++) {
      ManagedProcess old = pods.get(i);
      old.terminate();
      assertThat(old.awaitExit(Duration.ofSeconds(30)).orElse(-1)).as("%s stopped gracefully", old.name())
          .isIn(0, 143);
      pods.set(i, startPod());
      pods.remove(pods.size() - 1);
      awaitOwned(3);
      awaitAcked(500);
    }
    Audit a = finish();
    assertClean(a);
    assertThat(a.unacknowledged()).as("deposits that failed during graceful restarts").isZero();
  }
}
