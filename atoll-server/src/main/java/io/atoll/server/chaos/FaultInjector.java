package io.atoll.server.chaos;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodStatus;
import io.atoll.testkit.net.TcpRelay;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Injects one fault into a {@link ChaosCluster} and undoes it (thaws, heals, restarts), choosing the
 * victim and the fault's length with the run's seeded random. It says what it does as it goes; it
 * does not wait for the cluster to recover (the run does). Used from one thread.
 */
final class FaultInjector {

  /** Sends one slow deposit: its handler stalls for {@code stallMillis}, asked with {@code askTimeout}. */
  @FunctionalInterface
  interface SlowDeposits {
    /** Sends it; the future completes with what became of the ask, in words. */
    CompletableFuture<String> send(long stallMillis, Duration askTimeout);
  }

  private final ChaosCluster cluster;
  private final Random random;
  private final Duration lease;
  private final Duration margin;
  private final Supplier<ClusterConfig> view;
  private final SlowDeposits slow;
  private final Consumer<String> say;
  private int version = 1;

  /**
   * @param margin the managers' lease margin
   * @param view the cluster's config as a client sees it, to wait for a new pod to be active
   * @param slow how the slow-handler fault sends its deposit
   * @param say where progress lines go
   */
  FaultInjector(ChaosCluster cluster, Random random, Duration lease, Duration margin, Supplier<ClusterConfig> view,
      SlowDeposits slow, Consumer<String> say) {
    this.cluster = cluster;
    this.random = random;
    this.lease = lease;
    this.margin = margin;
    this.view = view;
    this.slow = slow;
    this.say = say;
  }

  /** The version pods start with now. */
  String version() {
    return Integer.toString(version);
  }

  void inject(FaultKind kind) throws InterruptedException {
    switch (kind) {
      case KILL_POD -> {
        ChaosCluster.Pod p = victim();
        say.accept("x kill -9 " + p.name() + "; a new pod takes its place");
        cluster.kill(p);
        replace();
      }
      case PAUSE_POD -> {
        ChaosCluster.Pod p = victim();
        long millis = pastLease();
        say.accept("|| SIGSTOP " + p.name() + " for " + millis + " ms (lease " + lease.toMillis() + " ms), then SIGCONT");
        long since = cluster.pause(p);
        TimeUnit.MILLISECONDS.sleep(millis); // the fault's length
        cluster.resume(p, since);
      }
      case KILL_MANAGER -> {
        long down = random.nextLong(lease.toMillis() + 1);
        boolean store = cluster.store() != null;
        say.accept("x kill -9 the " + (store ? "leading manager (" + cluster.leader().name() + "); the standby takes"
            + " over when its store lease lapses; the killed one comes back as the standby" : "manager") + " after "
            + down + " ms");
        cluster.killLeader();
        TimeUnit.MILLISECONDS.sleep(down); // the fault's length
        say.accept("  started again: " + cluster.restartStoppedManagers());
      }
      case PAUSE_MANAGER -> {
        long millis = pastLease();
        io.atoll.testkit.process.ManagedProcess leader = cluster.leader();
        say.accept("|| SIGSTOP the manager" + (cluster.store() != null ? " that leads (" + leader.name() + ")" : "")
            + " for " + millis + " ms (lease " + lease.toMillis() + " ms), then SIGCONT");
        leader.pause();
        TimeUnit.MILLISECONDS.sleep(millis); // the fault's length
        leader.resume();
      }
      case DROP_POD_MANAGER -> {
        ChaosCluster.Pod p = victim();
        drop(p.toManagers(), "between " + p.name() + " and the manager" + (p.toManagers().size() > 1 ? "s" : ""));
      }
      case DROP_INTO_POD -> {
        ChaosCluster.Pod p = victim();
        drop(List.of(p.inbound()), "into " + p.name() + " (from the other pods, the client and the manager)");
      }
      case DROP_POD_POD -> {
        ChaosCluster.Pod a = victim();
        List<ChaosCluster.Pod> others = cluster.pods().stream().filter(p -> p != a).toList();
        ChaosCluster.Pod b = others.get(random.nextInt(others.size()));
        long millis = dropMillis();
        TcpRelay.Mode mode = random.nextBoolean() ? TcpRelay.Mode.DROP : TcpRelay.Mode.STALL;
        say.accept("-/- " + (mode == TcpRelay.Mode.DROP ? "black-holing" : "stalling") + " traffic between " + a.name()
            + " and " + b.name() + " only, for " + millis + " ms (both still reach the manager, the client and the"
            + " other pods)");
        int open = cluster.cut(a, b, mode);
        say.accept("  " + open + " connection" + (open == 1 ? "" : "s") + " between them open at the cut");
        TimeUnit.MILLISECONDS.sleep(millis); // the fault's length
        cluster.heal(a, b);
      }
      case SLOW_HANDLER -> {
        long ask = Math.max(250, lease.toMillis() / 3);
        long stall = ask + lease.toMillis() / 6 + random.nextLong(lease.toMillis() / 2 + 1);
        say.accept("~ a deposit whose handler stalls " + stall + " ms, asked with a timeout of " + ask + " ms");
        CompletableFuture<String> outcome = slow.send(stall, Duration.ofMillis(ask));
        try {
          say.accept("  " + outcome.get(ask + stall + 30_000, TimeUnit.MILLISECONDS));
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
          say.accept("  the ask did not end: " + e);
        }
      }
      case PAUSE_STORE -> {
        long millis = dropMillis();
        say.accept("|| SIGSTOP the store (" + cluster.store().uri() + ") for " + millis + " ms, then SIGCONT");
        cluster.store().pause();
        TimeUnit.MILLISECONDS.sleep(millis); // the fault's length
        cluster.store().resume();
        restartStoppedManagers();
      }
      case RESTART_STORE -> {
        long down = random.nextLong(lease.toMillis() + 1);
        say.accept("x kill -9 the store (" + cluster.store().uri() + "); starting it again on its data after " + down
            + " ms");
        cluster.store().kill();
        TimeUnit.MILLISECONDS.sleep(down); // the fault's length
        try {
          cluster.store().startAgain();
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        restartStoppedManagers();
      }
      case RESTART_POD -> {
        ChaosCluster.Pod p = victim();
        say.accept("~ stopping " + p.name() + " gracefully (SIGTERM); a new pod takes its place");
        int code = cluster.stop(p);
        say.accept("  " + p.name() + " exited" + (code == 0 || code == 143 ? "" : " with code " + code));
        replace();
      }
      case ROLLING_RESTART -> {
        version++;
        say.accept("~ rolling restart to version " + version);
        for (ChaosCluster.Pod old : cluster.pods()) {
          ChaosCluster.Pod next = replace();
          awaitActive(next);
          say.accept("  stopping " + old.name() + " (version " + old.version() + ") gracefully");
          cluster.stop(old);
        }
      }
    }
  }

  /** A lease plus the manager's margin plus a sixth to five sixths of a lease (0.5 to 2.5 s for 3 s). */
  private long pastLease() {
    long l = lease.toMillis();
    return l + margin.toMillis() + l / 6 + random.nextLong(2 * l / 3 + 1);
  }

  /** Half a lease to one and a half leases plus the margin: around the lease, either side. */
  private long dropMillis() {
    return lease.toMillis() / 2 + random.nextLong(lease.toMillis() + margin.toMillis() + 1);
  }

  private void drop(List<TcpRelay> relays, String what) throws InterruptedException {
    long millis = dropMillis();
    TcpRelay.Mode mode = random.nextBoolean() ? TcpRelay.Mode.DROP : TcpRelay.Mode.STALL;
    say.accept("-/- " + (mode == TcpRelay.Mode.DROP ? "black-holing" : "stalling") + " traffic " + what + " for "
        + millis + " ms (lease " + lease.toMillis() + " ms; connections stay open)");
    relays.forEach(r -> r.mode(mode));
    TimeUnit.MILLISECONDS.sleep(millis); // the fault's length
    relays.forEach(TcpRelay::release);
  }

  private void restartStoppedManagers() {
    List<String> started = cluster.restartStoppedManagers();
    if (!started.isEmpty()) {
      say.accept("  managers that had stopped started again: " + started);
    }
  }

  /** A random pod among those that own shards (a pod that just joined may own none yet). */
  private ChaosCluster.Pod victim() {
    ClusterConfig config = view.get();
    java.util.Set<io.atoll.core.PodAddress> owners = new java.util.HashSet<>();
    config.ownedCounts().forEach((id, n) -> {
      if (n > 0) {
        owners.add(id.address());
      }
    });
    List<ChaosCluster.Pod> pods = cluster.pods().stream().filter(p -> owners.contains(p.address())).toList();
    if (pods.isEmpty()) {
      pods = cluster.pods();
    }
    return pods.get(random.nextInt(pods.size()));
  }

  private ChaosCluster.Pod replace() {
    ChaosCluster.Pod next = cluster.awaitUp(cluster.startPod(version()));
    say.accept("+ " + next.name() + " (version " + next.version() + ") joined on " + next.address());
    return next;
  }

  private void awaitActive(ChaosCluster.Pod pod) {
    io.atoll.testkit.Await.until(pod.name() + " active in the config", Duration.ofSeconds(60),
        () -> view.get().pods().stream().anyMatch(e -> e.status() == PodStatus.ACTIVE
            && e.id().address().equals(pod.address())));
  }
}
