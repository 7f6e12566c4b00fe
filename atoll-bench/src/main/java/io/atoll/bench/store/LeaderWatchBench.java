package io.atoll.bench.store;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.LeaderWatch;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How soon a standby hears that the leader is gone: a child JVM takes the store's lease and renews
 * it every third of its time to live; this JVM watches the leader twice at once — with the store's
 * own {@code watchLeader} and with a poll of {@code leader()} every tenth of the lease (what a
 * standby did before, and the SPI's default) — then kills the child with SIGKILL and measures, for
 * each, the time from the kill to being told that no manager leads. Both watch the same kill, so
 * the machine's load weighs on both alike. Prints each round and the medians.
 *
 * <pre>
 * java -cp atoll-bench/target/benchmarks.jar io.atoll.bench.store.LeaderWatchBench \
 *     --store file:/tmp/x | etcd://127.0.0.1:2379/bench | redis://127.0.0.1:6379?prefix=bench [--rounds 5] [--ttl 3s]
 * </pre>
 */
public final class LeaderWatchBench {

  private LeaderWatchBench() {}

  /** The time from {@code killedAt} to the first "no leader" a watch tells, once it is told. */
  private static final class Lapse implements AssignmentStore.LeaderListener {
    final AtomicLong killedAt;
    final CountDownLatch told = new CountDownLatch(1);
    volatile long nanos = -1;

    Lapse(AtomicLong killedAt) {
      this.killedAt = killedAt;
    }

    @Override
    public void leader(Optional<AssignmentStore.Leader> leader) {
      long k = killedAt.get();
      if (leader.isEmpty() && k != 0 && nanos < 0) {
        nanos = System.nanoTime() - k;
        told.countDown();
      }
    }
  }

  /**
   * Runs the rounds, or (with {@code --hold}) is the child: takes the lease, says so, renews.
   *
   * @param args {@code --store SPEC [--rounds N] [--ttl DURATION]}, or {@code --hold SPEC TTL_MS}
   */
  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("--hold")) {
      hold(args[1], Duration.ofMillis(Long.parseLong(args[2])));
      return;
    }
    String spec = null;
    int rounds = 5;
    Duration ttl = Duration.ofSeconds(3);
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--store" -> spec = args[++i];
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--ttl" -> ttl = Duration.parse("PT" + args[++i].toUpperCase(java.util.Locale.ROOT));
        default -> throw new IllegalArgumentException("unknown argument: " + args[i]
            + " (expected: --store SPEC [--rounds N] [--ttl 3s])");
      }
    }
    if (spec == null) {
      throw new IllegalArgumentException("--store is required (file:<dir>, etcd://..., redis://...)");
    }
    Duration poll = Duration.ofMillis(Math.max(50, ttl.toMillis() / 10));
    List<Long> watched = new ArrayList<>();
    List<Long> polled = new ArrayList<>();
    try (AssignmentStore store = StoreShareBench.open(spec)) {
      for (int round = 1; round <= rounds; round++) {
        Process child = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx64m", "-cp",
            System.getProperty("java.class.path"), LeaderWatchBench.class.getName(), "--hold", spec,
            Long.toString(ttl.toMillis())).redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8))) {
          String line;
          while ((line = out.readLine()) != null && !line.startsWith("holding")) {
            System.err.println("child: " + line);
          }
          if (line == null) {
            throw new IllegalStateException("the child never took the lease");
          }
          AtomicLong killedAt = new AtomicLong();
          Lapse viaWatch = new Lapse(killedAt);
          Lapse viaPoll = new Lapse(killedAt);
          try (AssignmentStore.Watch w = store.watchLeader(poll, viaWatch);
              AssignmentStore.Watch p = new LeaderWatch(store::leader, viaPoll, () -> false, e -> { })
                  .pollEvery(poll, "bench-leader-poll")) {
            if (store.leader().isEmpty()) {
              throw new IllegalStateException("round " + round + ": the child said it holds the lease; the store"
                  + " names no leader");
            }
            Thread.sleep(ttl.toMillis() / 2); // a kill at some point in the renewal cycle, not right at a renewal
            killedAt.set(System.nanoTime());
            child.destroyForcibly();
            long deadline = ttl.toMillis() * 3 + 5000;
            if (!viaWatch.told.await(deadline, TimeUnit.MILLISECONDS)
                || !viaPoll.told.await(deadline, TimeUnit.MILLISECONDS)) {
              throw new IllegalStateException("round " + round + ": no lapse told within " + deadline + " ms");
            }
          }
          long wm = TimeUnit.NANOSECONDS.toMillis(viaWatch.nanos);
          long pm = TimeUnit.NANOSECONDS.toMillis(viaPoll.nanos);
          watched.add(wm);
          polled.add(pm);
          System.out.printf("round %d: kill -> told, watch %d ms, poll every %d ms %d ms%n", round, wm,
              poll.toMillis(), pm);
        } finally {
          child.destroyForcibly().waitFor();
        }
      }
    }
    System.out.printf("store %s, ttl %d ms: median kill -> told: watch %d ms, poll %d ms%n", spec, ttl.toMillis(),
        median(watched), median(polled));
  }

  private static long median(List<Long> values) {
    List<Long> s = new ArrayList<>(values);
    Collections.sort(s);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  private static void hold(String spec, Duration ttl) throws InterruptedException {
    AssignmentStore store = StoreShareBench.open(spec);
    AssignmentStore.Lease lease;
    for (;;) {
      Optional<AssignmentStore.Lease> l = store.tryAcquire("bench-holder:1", ttl);
      if (l.isPresent()) {
        lease = l.get();
        break;
      }
      Thread.sleep(50); // a previous round's lease still lapsing
    }
    System.out.println("holding term " + lease.term());
    System.out.flush();
    for (;;) {
      Thread.sleep(ttl.toMillis() / 3);
      store.renew(lease);
    }
  }
}
