package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.Space;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AccountMsg;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.demo.Statement;
import io.atoll.server.demo.StatementMsg;
import io.atoll.testkit.Await;
import io.atoll.testkit.junit.ProcessLogsOnFailure;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12's process test: a manager with two spaces ({@code default=8,statements=8}), a pod of the
 * default role (the accounts) and two pods of the role {@code statements}, each its own process
 * (-Xmx256m). One statements pod is killed with SIGKILL while a client keeps depositing into
 * accounts: only the statements space's shards move, each to the other statements pod; no claim of
 * the default space changes; every deposit sent meanwhile is acknowledged, including those sent
 * while the killed pod's shards had no live owner; and the statements answer again afterwards.
 */
class SpacesKillIT {

  static final Duration LEASE = Duration.ofSeconds(3);

  @TempDir
  Path dir;
  @RegisterExtension
  final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);

  @Test
  void killingAStatementsPodMovesOnlyStatementsShardsAndTheAccountsKeepServing() throws Exception {
    try (ProcessCluster processes = new ProcessCluster(dir, Duration.ZERO)) {
      ManagedProcess manager = processes.start(AtollProcesses.atoll("manager", List.of("manager", "--port", "0",
          "--data-dir", dir.resolve("manager").toString(), "--spaces", "default=8," + Statement.ROLE + "=8",
          "--lease", LEASE.toMillis() + "ms", "--lease-margin", "1s", "--rebalance-interval", "2s",
          "--rebalance-retry", "1s", "--ping-timeout", "1s", "--termination-timeout", "2s")));
      PodAddress at = manager.awaitAddress(Duration.ofSeconds(60));
      ManagedProcess web = pod(processes, "pod-web", at, List.of());
      ManagedProcess stmt1 = pod(processes, "pod-stmt-1", at, List.of("--role", Statement.ROLE));
      ManagedProcess stmt2 = pod(processes, "pod-stmt-2", at, List.of("--role", Statement.ROLE));
      PodAddress webAt = web.awaitAddress(Duration.ofSeconds(60));
      PodAddress victimAt = stmt1.awaitAddress(Duration.ofSeconds(60));
      PodAddress survivorAt = stmt2.awaitAddress(Duration.ofSeconds(60));

      try (Sharding client = Sharding.builder().manager(at.toString()).clientOnly()
          .sendTimeout(Duration.ofSeconds(10)).askTimeout(Duration.ofSeconds(10)).start()) {
        Await.until("the default space on pod-web, the statements space split between the two statements pods",
            Duration.ofSeconds(60), Duration.ofMillis(50), () -> {
              ClusterConfig c = client.config();
              return owners(c, c.spaces().of(Space.DEFAULT_ROLE)).equals(List.of(webAt))
                  && new HashSet<>(owners(c, c.spaces().of(Statement.ROLE))).equals(Set.of(victimAt, survivorAt))
                  && owned(c, c.spaces().of(Statement.ROLE), victimAt) == 4;
            });
        ClusterConfig before = client.config();
        Space def = before.spaces().of(Space.DEFAULT_ROLE);
        Space stmts = before.spaces().of(Statement.ROLE);
        List<Claim> defaultClaims = claims(before, def);

        // Both types answer before the fault.
        for (int i = 0; i < 20; i++) {
          client.entity(Statement.TYPE, "stmt-" + i).tell(new StatementMsg.Entry(i, 1)).toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
        }

        Queue<Long> acks = new ConcurrentLinkedQueue<>();
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread load = Thread.ofPlatform().name("deposits").start(() -> {
          long op = 0;
          while (running.get()) {
            try {
              client.entity(Account.TYPE, "acct-" + (op % 50)).tell(new AccountMsg.Deposit(op++, 1))
                  .toCompletableFuture().get(15, TimeUnit.SECONDS);
              acks.add(System.nanoTime());
            } catch (Exception e) {
              failures.add(e);
            }
          }
        });
        try {
          Await.until("deposits acknowledged before the kill", Duration.ofSeconds(30), Duration.ofMillis(20),
              () -> acks.size() >= 50);
          long killed = System.nanoTime();
          stmt1.kill();
          Await.until("the statements space all on pod-stmt-2", Duration.ofSeconds(60), Duration.ofMillis(50),
              () -> {
                ClusterConfig c = client.config();
                return owners(c, stmts).equals(List.of(survivorAt)) && !c.isActive(podOf(before, victimAt));
              });
          long moved = System.nanoTime();
          ClusterConfig after = client.config();

          assertThat(claims(after, def)).as("the default space's claims, untouched by the kill").isEqualTo(defaultClaims);
          for (int pos = stmts.first(); pos < stmts.first() + stmts.count(); pos++) {
            if (before.owner(pos).address().equals(survivorAt)) {
              assertThat(after.claim(pos)).as("a statements shard the survivor already owned, position " + pos)
                  .isEqualTo(before.claim(pos));
            }
          }
          long during = acks.stream().filter(t -> t > killed && t < moved).count();
          assertThat(during).as("deposits acknowledged between the kill and the move (%d ms)",
              TimeUnit.NANOSECONDS.toMillis(moved - killed)).isGreaterThanOrEqualTo(10);
          assertThat(TimeUnit.NANOSECONDS.toMillis(moved - killed)).as("the move waited for the lease")
              .isGreaterThanOrEqualTo(LEASE.toMillis() / 2);
        } finally {
          running.set(false);
          load.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertThat(failures).as("deposits that failed: the default space must keep serving").isEmpty();

        // The statements answer again, from the survivor.
        for (int i = 0; i < 20; i++) {
          client.entity(Statement.TYPE, "stmt-" + i).tell(new StatementMsg.Entry(100 + i, 1)).toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
          assertThat(client.entity(Statement.TYPE, "stmt-" + i).<Long>ask(StatementMsg.Total::new)
              .toCompletableFuture().get(10, TimeUnit.SECONDS)).as("stmt-%s's total (in memory: 1 if it moved)", i)
              .isIn(1L, 2L);
        }
        assertThat(web.isAlive()).isTrue();
      }
    }
  }

  private static ManagedProcess pod(ProcessCluster processes, String name, PodAddress manager, List<String> extra) {
    List<String> args = new ArrayList<>(List.of("pod", "--manager", manager.toString(), "--termination-timeout", "2s",
        "--send-timeout", "10s"));
    args.addAll(extra);
    return processes.start(AtollProcesses.atoll(name, args));
  }

  private static PodId podOf(ClusterConfig c, PodAddress address) {
    return c.pods().stream().map(e -> e.id()).filter(id -> id.address().equals(address)).findFirst().orElseThrow();
  }

  /**
   * The distinct live owners' addresses of a space's positions, in position order; null for a
   * position with no live owner (so not for {@code Set.copyOf}, which refuses nulls).
   */
  private static List<PodAddress> owners(ClusterConfig c, Space sp) {
    List<PodAddress> out = new ArrayList<>();
    for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
      PodId o = c.activeOwner(pos);
      PodAddress a = o == null ? null : o.address();
      if (!out.contains(a)) {
        out.add(a);
      }
    }
    return out;
  }

  private static long owned(ClusterConfig c, Space sp, PodAddress pod) {
    long n = 0;
    for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
      PodId o = c.activeOwner(pos);
      n += o != null && o.address().equals(pod) ? 1 : 0;
    }
    return n;
  }

  private static List<Claim> claims(ClusterConfig c, Space sp) {
    List<Claim> out = new ArrayList<>();
    for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
      out.add(c.claim(pos));
    }
    return out;
  }
}
