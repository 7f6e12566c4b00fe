package io.atoll.manager.metrics;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.manager.ManagerObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The shard manager's metrics in a Micrometer {@link MeterRegistry}; give it to {@link
 * io.atoll.manager.ShardManager#start(io.atoll.manager.ManagerSettings,
 * io.atoll.core.spi.AssignmentStore, io.atoll.core.spi.PodHealth, String, int, io.atoll.core.Ticker,
 * java.util.random.RandomGenerator, ManagerObserver)}.
 *
 * <p>Meters: {@code atoll.manager.shards{pod}} (shards per active pod, from the installed config),
 * {@code atoll.manager.pods.active}, {@code atoll.manager.epoch}, {@code
 * atoll.manager.lease.renewals{result=granted|refused}}, {@code atoll.manager.pods.gone{cause=left|died}}
 * (a pod whose lease ran out is fenced: its shards move), {@code
 * atoll.manager.rebalance.rounds{result=moved|idle|failed}}, {@code atoll.manager.rebalance.duration}
 * (a timer over every round) and {@code atoll.manager.rebalance.shards.moved}.
 *
 * <p>Called on the manager's loop; the gauges read a snapshot it keeps, so a scrape never waits for
 * the loop. Thread-safe.
 */
public final class ManagerMetrics implements ManagerObserver {

  private final MeterRegistry registry;
  private final MultiGauge shardsPerPod;
  private final Counter renewalsGranted;
  private final Counter renewalsRefused;
  private final Counter podsLeft;
  private final Counter podsDied;
  private final Counter roundsMoved;
  private final Counter roundsIdle;
  private final Counter roundsFailed;
  private final Counter shardsMoved;
  private final Timer roundDuration;
  private volatile ClusterConfig config;
  /** When the round in progress began (one round at a time, on the loop); 0 when none. */
  private volatile long roundStart;

  /** Registers the manager's meters in {@code registry}. */
  public ManagerMetrics(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
    shardsPerPod = MultiGauge.builder("atoll.manager.shards").description("shards per active pod")
        .register(registry);
    Gauge.builder("atoll.manager.pods.active", this, m -> m.config == null ? 0 : m.config.activePods().size())
        .description("active pods in the installed config").strongReference(true).register(registry);
    Gauge.builder("atoll.manager.epoch", this, m -> m.config == null ? 0 : m.config.epoch())
        .description("epoch of the installed config").strongReference(true).register(registry);
    renewalsGranted = renewals("granted");
    renewalsRefused = renewals("refused");
    podsLeft = gone("left");
    podsDied = gone("died");
    roundsMoved = rounds("moved");
    roundsIdle = rounds("idle");
    roundsFailed = rounds("failed");
    shardsMoved = Counter.builder("atoll.manager.rebalance.shards.moved").description("shards moved by rebalances")
        .register(registry);
    roundDuration = Timer.builder("atoll.manager.rebalance.duration").description("duration of rebalance rounds")
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofMinutes(1)).register(registry);
  }

  private Counter renewals(String result) {
    return Counter.builder("atoll.manager.lease.renewals").tag("result", result)
        .description("lease renewals asked of the manager").register(registry);
  }

  private Counter gone(String cause) {
    return Counter.builder("atoll.manager.pods.gone").tag("cause", cause)
        .description("pods marked gone: left, or died (lease ran out, or proven gone)").register(registry);
  }

  private Counter rounds(String result) {
    return Counter.builder("atoll.manager.rebalance.rounds").tag("result", result)
        .description("rebalance rounds").register(registry);
  }

  @Override
  public void configInstalled(ClusterConfig c) {
    config = c;
    Map<PodId, Integer> owned = c.ownedCounts();
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    for (Pod p : c.activePods()) {
      rows.add(MultiGauge.Row.of(Tags.of("pod", p.id().toString()), owned.getOrDefault(p.id(), 0)));
    }
    shardsPerPod.register(rows, true);
  }

  @Override
  public void leaseRenewal(PodId pod, boolean granted) {
    (granted ? renewalsGranted : renewalsRefused).increment();
  }

  @Override
  public void podGone(PodId pod, boolean died) {
    (died ? podsDied : podsLeft).increment();
  }

  @Override
  public void roundStarted() {
    roundStart = registry.config().clock().monotonicTime();
  }

  @Override
  public void roundFinished(int moved, boolean failed) {
    long start = roundStart;
    if (start != 0) {
      roundDuration.record(Duration.ofNanos(registry.config().clock().monotonicTime() - start));
    }
    roundStart = 0;
    (failed ? roundsFailed : moved > 0 ? roundsMoved : roundsIdle).increment();
    shardsMoved.increment(moved);
  }
}
