package io.atoll.bench.scale;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodAddress;
import io.atoll.manager.ManagerObserver;
import io.atoll.runtime.internal.cluster.SignedConfigs;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.ConfigBytes;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.grpc.ManagedChannel;
import com.google.protobuf.ByteString;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the simulated pods share: channels to the manager, one timer for every pod's renewals, the
 * configs they have verified (each distinct config is checked and decoded once, by the real
 * {@link SignedConfigs}; a pod then knows its epoch), and the measures: when the manager installed
 * each config and when the last pod got it, and the manager's rounds (its loop's CPU in each), as
 * its {@link Rounds} (the manager's observer) hears them. Thread-safe.
 */
final class SimFleet implements AutoCloseable {

  /** Pods per channel to the manager (each pod's watch is one stream). */
  private static final int PODS_PER_CHANNEL = 100;

  private final Duration lease;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final AtomicInteger nextChannel = new AtomicInteger();
  private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2, r -> {
    Thread t = new Thread(r, "sim-pods-timer");
    t.setDaemon(true);
    return t;
  });
  private final SignedConfigs signed = new SignedConfigs();
  private final Map<ByteString, Long> epochs = new ConcurrentHashMap<>();
  private final ConcurrentSkipListMap<Long, long[]> arrivals = new ConcurrentSkipListMap<>();
  private final ConcurrentSkipListMap<Long, Integer> sizes = new ConcurrentSkipListMap<>();
  private final Rounds rounds;
  private final AtomicLong unknownPods = new AtomicLong();

  /** @param rounds the observer given to the manager (from {@link Rounds#Rounds()}) */
  SimFleet(PodAddress manager, Duration lease, int pods, Rounds rounds) {
    this.lease = lease;
    this.rounds = rounds;
    for (int i = 0; i < Math.max(1, (pods + PODS_PER_CHANNEL - 1) / PODS_PER_CHANNEL); i++) {
      channels.add(Wire.channel(manager));
    }
  }

  /** The manager's rounds as the manager's observer hears them (on its loop). */
  static final class Rounds implements ManagerObserver {
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private volatile long startedNanos;
    private volatile long startedCpu;
    final List<long[]> finished = java.util.Collections.synchronizedList(new ArrayList<>()); // moved, wall ns, cpu ns
    final ConcurrentSkipListMap<Long, Long> installs = new ConcurrentSkipListMap<>();

    @Override
    public void roundStarted() {
      startedNanos = System.nanoTime();
      startedCpu = threads.getCurrentThreadCpuTime();
    }

    @Override
    public void roundFinished(int moved, boolean failed) {
      finished.add(new long[] {moved, System.nanoTime() - startedNanos,
          threads.getCurrentThreadCpuTime() - startedCpu});
    }

    @Override
    public void configInstalled(ClusterConfig config) {
      installs.put(config.epoch(), System.nanoTime());
    }
  }

  Rounds rounds() {
    return rounds;
  }

  Duration lease() {
    return lease;
  }

  ScheduledExecutorService timer() {
    return timer;
  }

  /** A stub on one of the channels, in turn. */
  ShardManagerServiceGrpc.ShardManagerServiceStub stub() {
    return ShardManagerServiceGrpc.newStub(channels.get(Math.floorMod(nextChannel.getAndIncrement(), channels.size())));
  }

  /** A blocking stub on one of the channels, in turn. */
  ShardManagerServiceGrpc.ShardManagerServiceBlockingStub blockingStub() {
    return ShardManagerServiceGrpc.newBlockingStub(channels.get(Math.floorMod(nextChannel.getAndIncrement(),
        channels.size())));
  }

  /** The epoch of a config from the manager: verified and decoded the first time it is seen. */
  long epochOf(ConfigBytes bytes) {
    return epochs.computeIfAbsent(bytes.getSignature(), k -> {
      long e = signed.fromManager(bytes).epoch();
      sizes.put(e, bytes.getEncoded().size());
      return e;
    });
  }

  /** A pod went from config epoch {@code from} to {@code to} at {@code nanos}. */
  void arrived(long from, long to, long nanos) {
    for (long e : rounds.installs.subMap(from, false, to, true).keySet()) {
      arrivals.compute(e, (k, v) -> v == null ? new long[] {nanos, 1} : new long[] {Math.max(v[0], nanos), v[1] + 1});
    }
  }

  /** A pod's renewal was answered "unknown pod": the manager declared it dead. */
  void unknownPod() {
    unknownPods.incrementAndGet();
  }

  long unknownPods() {
    return unknownPods.get();
  }

  /** When the manager installed config {@code epoch} (nanoTime), or -1. */
  long installedAt(long epoch) {
    return rounds.installs.getOrDefault(epoch, -1L);
  }

  /** The encoded size of config {@code epoch} as the pods got it, or -1 if none did. */
  int sizeOf(long epoch) {
    return sizes.getOrDefault(epoch, -1);
  }

  /**
   * For each config installed in [{@code from}, {@code to}] that {@code pods} pods or more got: the
   * time from its install until the last of them had it (or a newer one), in milliseconds.
   */
  List<Double> spreadMillis(long from, long to, int pods) {
    List<Double> out = new ArrayList<>();
    for (Map.Entry<Long, Long> e : rounds.installs.subMap(from, true, to, true).entrySet()) {
      long[] a = arrivals.get(e.getKey());
      if (a != null && a[1] >= pods) {
        out.add((a[0] - e.getValue()) / 1e6);
      }
    }
    return out;
  }

  /** The newest config installed, or -1. */
  long lastInstalled() {
    return rounds.installs.isEmpty() ? -1 : rounds.installs.lastKey();
  }

  @Override
  public void close() {
    timer.shutdownNow();
    for (ManagedChannel c : channels) {
      Wire.close(c);
    }
  }
}
