package io.atoll.server.chaos;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodStatus;
import io.atoll.testkit.net.TcpRelay;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Injects one fault into a {@link ChaosCluster} and undoes it (thaws, heals, restarts), choosing the
 * victim and the fault's length with the run's seeded random. It says what it does as it goes; it
 * does not wait for the cluster to recover (the run does). Used from one thread.
 */
final class FaultInjector {

  private final ChaosCluster cluster;
  private final Random random;
  private final Duration lease;
  private final Supplier<ClusterConfig> view;
  private final Consumer<String> say;
  private int version = 1;

  /**
   * @param view the cluster's config as a client sees it, to wait for a new pod to be active
   * @param say where progress lines go
   */
  FaultInjector(ChaosCluster cluster, Random random, Duration lease, Supplier<ClusterConfig> view,
      Consumer<String> say) {
    this.cluster = cluster;
    this.random = random;
    this.lease = lease;
    this.view = view;
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
        say.accept("x kill -9 the manager; restarting it after " + down + " ms");
        cluster.killManager();
        TimeUnit.MILLISECONDS.sleep(down); // the fault's length
        cluster.startManager();
        say.accept("  manager up again");
      }
      case PAUSE_MANAGER -> {
        long millis = pastLease();
        say.accept("|| SIGSTOP the manager for " + millis + " ms (lease " + lease.toMillis() + " ms), then SIGCONT");
        cluster.manager().pause();
        TimeUnit.MILLISECONDS.sleep(millis); // the fault's length
        cluster.manager().resume();
      }
      case DROP_POD_MANAGER -> {
        ChaosCluster.Pod p = victim();
        drop(p.toManager(), "between " + p.name() + " and the manager");
      }
      case DROP_INTO_POD -> {
        ChaosCluster.Pod p = victim();
        drop(p.inbound(), "into " + p.name() + " (from the other pods, the client and the manager)");
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

  /** A lease plus the manager's one-second margin plus 0.5 to 2.5 s. */
  private long pastLease() {
    return lease.toMillis() + 1_000 + 500 + random.nextLong(2_000);
  }

  private void drop(TcpRelay relay, String what) throws InterruptedException {
    long millis = lease.toMillis() / 2 + random.nextLong(lease.toMillis() + 1_000);
    TcpRelay.Mode mode = random.nextBoolean() ? TcpRelay.Mode.DROP : TcpRelay.Mode.STALL;
    say.accept("-/- " + (mode == TcpRelay.Mode.DROP ? "black-holing" : "stalling") + " traffic " + what + " for "
        + millis + " ms (lease " + lease.toMillis() + " ms; connections stay open)");
    relay.mode(mode);
    TimeUnit.MILLISECONDS.sleep(millis); // the fault's length
    relay.release();
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
    ChaosCluster.Pod next = cluster.startPod(version());
    cluster.awaitUp(next);
    say.accept("+ " + next.name() + " (version " + next.version() + ") joined on " + next.address());
    return next;
  }

  private void awaitActive(ChaosCluster.Pod pod) {
    io.atoll.testkit.Await.until(pod.name() + " active in the config", Duration.ofSeconds(60),
        () -> view.get().pods().stream().anyMatch(e -> e.status() == PodStatus.ACTIVE
            && e.id().address().equals(pod.address())));
  }
}
