package io.atoll.bench.cluster;

import io.atoll.bench.sidebyside.ConfirmedTells;
import io.atoll.bench.sidebyside.Results;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.core.ShardHasher;
import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The loads the load generator's scenarios put on a cluster, each measured for {@code seconds}
 * after {@code warmup} seconds, from one sending thread. Not thread-safe; not API.
 *
 * @param warmup seconds of warm-up before measuring
 * @param seconds seconds measured
 */
record Loads(int warmup, int seconds) {

  /** Refs to the counters {@code c-0} to {@code c-(n-1)}. */
  static List<EntityRef<BenchCounter.Msg>> refs(Sharding s, int n) {
    return refs(s, "c-", n);
  }

  /** Refs to the counters {@code <prefix>0} to {@code <prefix>(n-1)}. */
  static List<EntityRef<BenchCounter.Msg>> refs(Sharding s, String prefix, int n) {
    List<EntityRef<BenchCounter.Msg>> refs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      refs.add(s.entity(BenchCounter.TYPE, prefix + i));
    }
    return refs;
  }

  /**
   * Activates {@code n} counters with one acknowledged tell each, {@code window} in flight, and
   * returns the tells that failed. Holds no future beyond the window, so a million fit in a small
   * heap.
   *
   * @param send sends the tell to the {@code i}-th counter
   */
  static long activate(int n, int window, Function<Integer, CompletableFuture<?>> send) throws InterruptedException {
    Semaphore permits = new Semaphore(window);
    AtomicLong failed = new AtomicLong();
    for (int i = 0; i < n; i++) {
      permits.acquire();
      send.apply(i).whenComplete((v, e) -> {
        if (e != null) {
          failed.incrementAndGet();
        }
        permits.release();
      });
    }
    if (!permits.tryAcquire(window, 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException((window - permits.availablePermits()) + " of " + n
          + " activations unanswered after 60 s (expected: every tell acknowledged or failed by its 30 s timeout)");
    }
    return failed.get();
  }

  /** Messages per second with {@code window} in flight, asks or acknowledged tells, round-robin over {@code refs}. */
  Map<String, Double> throughput(List<EntityRef<BenchCounter.Msg>> refs, int window, boolean ask) throws Exception {
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    Semaphore permits = new Semaphore(window);
    BenchCounter.Inc inc = new BenchCounter.Inc(1);
    Function<Integer, CompletableFuture<?>> send = ask
        ? i -> refs.get(i).<Long>ask(BenchCounter.Get::new).toCompletableFuture()
        : i -> refs.get(i).tell(inc).toCompletableFuture();
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
    long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
    long atMeasureStart = -1;
    int i = 0;
    while (true) {
      long now = System.nanoTime();
      if (atMeasureStart < 0 && now >= measureFrom) {
        atMeasureStart = done.get();
      }
      if (now >= end) {
        break;
      }
      permits.acquire();
      send.apply(i).whenComplete((v, e) -> {
        if (e != null) {
          failed.incrementAndGet();
        }
        done.incrementAndGet();
        permits.release();
      });
      i = i + 1 == refs.size() ? 0 : i + 1;
    }
    long measured = done.get() - atMeasureStart;
    permits.acquire(window);
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("msg/s", measured / (double) seconds);
    r.put("failed", (double) failed.get());
    return r;
  }

  /**
   * Handled tells per second, the futures ignored and the handled count confirmed in batches,
   * 8192 unconfirmed at most: the shape of the Pekko peer's tell load ({@link ConfirmedTells}).
   * Locally the count is this JVM's; remotely it is the sum over the pods that own {@code refs}'
   * shards in {@code s}'s view, each asked through one counter it hosts.
   */
  Map<String, Double> confirmedTells(Sharding s, List<EntityRef<BenchCounter.Msg>> refs, boolean local)
      throws Exception {
    BenchCounter.Inc inc = new BenchCounter.Inc(1);
    List<EntityRef<BenchCounter.Msg>> perPod = local ? List.of() : onePerPod(s.config(), refs);
    Supplier<CompletableFuture<Long>> handled = () -> {
      List<CompletableFuture<Long>> asks = new ArrayList<>(perPod.size());
      for (EntityRef<BenchCounter.Msg> r : perPod) {
        asks.add(r.<Long>ask(BenchCounter.Handled::new).toCompletableFuture());
      }
      return CompletableFuture.allOf(asks.toArray(CompletableFuture<?>[]::new))
          .thenApply(v -> asks.stream().mapToLong(CompletableFuture::join).sum());
    };
    return ConfirmedTells.run(i -> refs.get(i).tell(inc), refs.size(), 8192, warmup, seconds,
        local ? BenchCounter.HANDLED::sum : null, handled);
  }

  /**
   * One of {@code refs} on each pod that owns one of their shards in {@code config} (one shard
   * space, the default hasher, as {@link BenchCounter#TYPE} has).
   *
   * @throws IllegalStateException if a counter's shard has no owner
   */
  static List<EntityRef<BenchCounter.Msg>> onePerPod(ClusterConfig config, List<EntityRef<BenchCounter.Msg>> refs) {
    Map<PodId, EntityRef<BenchCounter.Msg>> byPod = new LinkedHashMap<>();
    for (EntityRef<BenchCounter.Msg> r : refs) {
      PodId owner = config.owner(ShardHasher.DEFAULT.shardOf(r.entityId(), config.size()) - 1);
      if (owner == null) {
        throw new IllegalStateException("counter " + r.entityId() + " has no owner at epoch " + config.epoch()
            + " (expected: every shard owned before the load starts)");
      }
      byPod.putIfAbsent(owner, r);
    }
    return List.copyOf(byPod.values());
  }

  /** Ask latency with one in flight, round-robin over {@code refs}: p50 and p99 in microseconds. */
  Map<String, Double> latency(List<EntityRef<BenchCounter.Msg>> refs) throws Exception {
    long start = System.nanoTime();
    long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
    long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
    long[] samples = new long[1 << 22];
    int n = 0;
    int i = 0;
    while (true) {
      long t0 = System.nanoTime();
      if (t0 >= end || n == samples.length) {
        break;
      }
      refs.get(i).<Long>ask(BenchCounter.Get::new).toCompletableFuture().get(10, TimeUnit.SECONDS);
      long t1 = System.nanoTime();
      if (t0 >= measureFrom) {
        samples[n++] = t1 - t0;
      }
      i = i + 1 == refs.size() ? 0 : i + 1;
    }
    return Results.percentiles(Arrays.copyOf(samples, n));
  }
}
