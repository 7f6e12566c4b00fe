package io.atoll.bench.cluster;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityContext;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Latency under overload: a pod whose entities each take a fixed time per message (a blocking
 * wait, as a database call is), first measured closed-loop for the rate it sustains, then sent
 * asks open-loop at a multiple of that rate from a client pod over gRPC on loopback. Prints, per
 * {@code maxQueueTime}, the share of asks answered, refused as overloaded and timed out, and the
 * latency of the answered ones (p50, p99, max). Manager, pod and client share this JVM.
 *
 * <pre>
 * java -cp atoll-bench/target/benchmarks.jar io.atoll.bench.cluster.OverloadBench
 *      [--entities 10] [--handler-ms 10] [--factor 2] [--seconds 10] [--timeout-ms 5000]
 *      [--max-queue-ms 1000,100,0]
 * </pre>
 *
 * Public for the command line; not API.
 */
public final class OverloadBench {

  /** The entity: each message takes a fixed time, then is answered. */
  static final class Busy implements Entity<Busy.Work> {
    record Work(Reply<Boolean> reply) {}

    static final EntityType<Work> TYPE = EntityType.of("busy", Work.class);
    static volatile long handlerNanos;

    @Override
    public void onMessage(Work w, EntityContext context) throws Exception {
      TimeUnit.NANOSECONDS.sleep(handlerNanos); // the work: a call that waits, as a database's does
      w.reply().send(true);
    }
  }

  private OverloadBench() {}

  /** Runs it. */
  public static void main(String[] args) throws Exception {
    int entities = 10;
    long handlerMs = 10;
    double factor = 2;
    int seconds = 10;
    long timeoutMs = 5000;
    List<Long> bounds = List.of(1000L, 100L, 0L);
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--entities" -> entities = Integer.parseInt(args[i + 1]);
        case "--handler-ms" -> handlerMs = Long.parseLong(args[i + 1]);
        case "--factor" -> factor = Double.parseDouble(args[i + 1]);
        case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
        case "--timeout-ms" -> timeoutMs = Long.parseLong(args[i + 1]);
        case "--max-queue-ms" -> bounds = Arrays.stream(args[i + 1].split(",")).map(Long::parseLong).toList();
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    Busy.handlerNanos = TimeUnit.MILLISECONDS.toNanos(handlerMs);
    System.out.printf("%s, %d cores, JDK %s; %d entities of %d ms per message, asks with a %d ms timeout%n",
        System.getProperty("os.name"), Runtime.getRuntime().availableProcessors(), Runtime.version(), entities,
        handlerMs, timeoutMs);
    for (long bound : bounds) {
      run(entities, factor, seconds, Duration.ofMillis(timeoutMs), Duration.ofMillis(bound));
    }
    System.exit(0);
  }

  private static void run(int entities, double factor, int seconds, Duration timeout, Duration bound)
      throws Exception {
    try (LocalCluster cluster = LocalCluster.builder().shards(entities * 4).start()) {
      cluster.addPod(b -> b.register(Busy.TYPE, ctx -> new Busy()).maxQueueTime(bound));
      Sharding client = cluster.addClient(b -> b.askTimeout(timeout));
      cluster.awaitSettled(Duration.ofSeconds(30));
      double sustained = closedLoop(client, entities, 3);
      double offered = sustained * factor;
      long[] outcome = new long[3]; // answered, refused, timed out or failed otherwise
      long[] latencies = openLoop(client, entities, offered, seconds, outcome);
      long n = outcome[0] + outcome[1] + outcome[2];
      System.out.printf("maxQueueTime %d ms: sustains %,.0f asks/s; at %,.0f/s (%.1f×) for %d s: answered %.1f %%,"
          + " refused as overloaded %.1f %%, timed out or failed %.2f %% (%,d); answered p50 %d ms, p99 %d ms,"
          + " max %d ms%n", bound.toMillis(), sustained, offered, factor, seconds, 100.0 * outcome[0] / n,
          100.0 * outcome[1] / n, 100.0 * outcome[2] / n, outcome[2], percentile(latencies, 0.50),
          percentile(latencies, 0.99), percentile(latencies, 1.0));
    }
  }

  /** Asks with two per entity in flight for {@code seconds} after a second of warm-up: answers per second. */
  private static double closedLoop(Sharding client, int entities, int seconds) throws Exception {
    Semaphore inFlight = new Semaphore(entities * 2);
    AtomicLong answered = new AtomicLong();
    long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
    long end = warmEnd + TimeUnit.SECONDS.toNanos(seconds);
    long counted = 0;
    int i = 0;
    while (System.nanoTime() < end) {
      inFlight.acquire();
      client.entity(Busy.TYPE, "e" + (i++ % entities)).<Boolean>ask(Busy.Work::new).whenComplete((v, e) -> {
        if (e == null) {
          answered.incrementAndGet();
        }
        inFlight.release();
      });
      if (counted == 0 && System.nanoTime() >= warmEnd) {
        counted = answered.get();
      }
    }
    inFlight.acquire(entities * 2);
    return (answered.get() - counted) / (double) seconds;
  }

  /** Asks at {@code rate} per second for {@code seconds}; returns the answered ones' latencies (ms). */
  private static long[] openLoop(Sharding client, int entities, double rate, int seconds, long[] outcome)
      throws Exception {
    List<CompletableFuture<long[]>> all = new ArrayList<>();
    long spacing = (long) (1e9 / rate);
    long start = System.nanoTime();
    long count = (long) (rate * seconds);
    for (long i = 0; i < count; i++) {
      long early = start + i * spacing - System.nanoTime();
      if (early > 0) {
        LockSupport.parkNanos(early); // the open loop's pace
      }
      long sent = System.nanoTime();
      all.add(client.entity(Busy.TYPE, "e" + (i % entities)).<Boolean>ask(Busy.Work::new).toCompletableFuture()
          .handle((v, e) -> new long[] {e == null ? 0 : refused(e) ? 1 : 2,
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)}));
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(2, TimeUnit.MINUTES);
    long[] lat = all.stream().map(CompletableFuture::join).filter(r -> r[0] == 0).mapToLong(r -> r[1]).sorted()
        .toArray();
    for (CompletableFuture<long[]> f : all) {
      outcome[(int) f.join()[0]]++;
    }
    return lat;
  }

  private static boolean refused(Throwable e) {
    Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    return c instanceof io.atoll.runtime.DeliveryException d
        && d.reason() == io.atoll.runtime.DeliveryException.Reason.OVERLOADED;
  }

  private static long percentile(long[] sorted, double q) {
    if (sorted.length == 0) {
      return -1;
    }
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1 < 0 ? 0
        : (int) Math.ceil(q * sorted.length) - 1)];
  }
}
