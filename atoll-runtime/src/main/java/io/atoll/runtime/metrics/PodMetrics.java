package io.atoll.runtime.metrics;

import io.atoll.core.FencingToken;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.OverloadCause;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A pod's metrics in a Micrometer {@link MeterRegistry}. Give it to the pod as its observer, and
 * bind it to the started pod for the gauges:
 *
 * <pre>{@code
 * PodMetrics metrics = new PodMetrics(registry);
 * Sharding pod = Sharding.builder().observer(metrics)...start();
 * metrics.bind(pod);
 * }</pre>
 *
 * <p>Meters (Prometheus names in brackets):
 *
 * <ul>
 *   <li>{@code atoll.messages.sent} [{@code atoll_messages_sent_total}]: tells and asks sent from
 *       this pod; {@code atoll.messages.handled{kind=tell|ask}}; {@code
 *       atoll.messages.failed{reason}}, one per {@link DeliveryException.Reason};
 *   <li>{@code atoll.ask.latency} [{@code atoll_ask_latency_seconds_bucket}]: a histogram of the
 *       time from an ask to its answer;
 *   <li>{@code atoll.messages.notowner.retries}: messages refused by the pod they were sent to
 *       (NotOwner, a hand-off in progress) and sent again;
 *   <li>gauges {@code atoll.messages.buffered} (total waiting in shard buffers), {@code
 *       atoll.messages.inflight}, {@code atoll.shards.served}, {@code atoll.entities.live}, {@code
 *       atoll.pod.lease.held} (1 while the pod holds its lease);
 *   <li>per entity type: {@code atoll.entities.active{type}} (gauge), {@code
 *       atoll.entities.activations{type}}, {@code atoll.entities.deactivations{type}} (passivation,
 *       hand-off, failure, fencing), {@code atoll.messages.refused{type,cause}}: messages to this
 *       pod's entities refused unhandled as overloaded, one per {@link OverloadCause};
 *   <li>{@code atoll.shards.activated}, {@code atoll.shards.released}, {@code atoll.pod.fencings}.
 * </ul>
 *
 * <p>A message is counted as handled or failed just after its sender's stage completes, on the
 * thread that completed it (on a pod's shared drains, at the end of the drain's turn), so a caller
 * woken by that completion may read the counters a moment before they count its message.
 *
 * <p>Every meter of the message path is registered up front: counting a message is an increment
 * of an existing counter and allocates nothing. Per-type meters are made at a type's first
 * activation. Thread-safe.
 */
public final class PodMetrics implements ShardingObserver {

  private final MeterRegistry registry;
  private final Counter sent;
  private final Counter handledTells;
  private final Counter handledAsks;
  private final Counter[] failed;
  private final Counter retries;
  private final Timer askLatency;
  private final Counter shardsActivated;
  private final Counter shardsReleased;
  private final Counter fencings;
  private final ConcurrentHashMap<String, TypeMeters> types = new ConcurrentHashMap<>();

  /** Meters of one entity type. */
  private record TypeMeters(AtomicLong active, Counter activations, Counter deactivations, Counter[] refused) {}

  /** Registers the message-path meters in {@code registry}. */
  public PodMetrics(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
    sent = Counter.builder("atoll.messages.sent").description("tells and asks sent from this pod")
        .register(registry);
    handledTells = handled("tell");
    handledAsks = handled("ask");
    DeliveryException.Reason[] reasons = DeliveryException.Reason.values();
    failed = new Counter[reasons.length];
    for (DeliveryException.Reason r : reasons) {
      failed[r.ordinal()] = Counter.builder("atoll.messages.failed").tag("reason", r.name())
          .description("messages sent from this pod that failed, by reason").register(registry);
    }
    retries = Counter.builder("atoll.messages.notowner.retries")
        .description("messages refused by the pod they were sent to (NotOwner, hand-off) and sent again")
        .register(registry);
    askLatency = Timer.builder("atoll.ask.latency").description("time from an ask to its answer")
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
        .maximumExpectedValue(Duration.ofSeconds(30)).register(registry);
    shardsActivated = Counter.builder("atoll.shards.activated").description("shards this pod began to serve")
        .register(registry);
    shardsReleased = Counter.builder("atoll.shards.released").description("shards this pod stopped serving")
        .register(registry);
    fencings = Counter.builder("atoll.pod.fencings")
        .description("times this pod fenced itself (lease lapsed, or declared gone)").register(registry);
  }

  private Counter handled(String kind) {
    return Counter.builder("atoll.messages.handled").tag("kind", kind)
        .description("messages sent from this pod and handled (tells) or answered (asks)").register(registry);
  }

  /**
   * Registers the gauges that read {@code pod}'s state at each scrape: buffered and in-flight
   * messages, served shards, live entities, and whether it holds its lease.
   *
   * @return this
   */
  public PodMetrics bind(Sharding pod) {
    Objects.requireNonNull(pod, "pod");
    Gauge.builder("atoll.messages.buffered", pod, Sharding::bufferedMessages)
        .description("messages waiting in this pod's shard buffers for an owner").register(registry);
    Gauge.builder("atoll.messages.inflight", pod, Sharding::inFlight)
        .description("messages sent from this pod, not yet answered or failed").register(registry);
    Gauge.builder("atoll.shards.served", pod, p -> p.servedShards().size())
        .description("shards this pod serves").register(registry);
    Gauge.builder("atoll.entities.live", pod, Sharding::activeEntities)
        .description("live entity activations on this pod").register(registry);
    Gauge.builder("atoll.pod.lease.held", pod, p -> p.holdsLease() ? 1 : 0)
        .description("1 while this pod holds its lease").register(registry);
    return this;
  }

  @Override
  public void messageSent() {
    sent.increment();
  }

  @Override
  public void messageHandled(boolean ask, long nanos) {
    if (ask) {
      handledAsks.increment();
      askLatency.record(nanos, TimeUnit.NANOSECONDS);
    } else {
      handledTells.increment();
    }
  }

  @Override
  public void messageFailed(DeliveryException.Reason reason) {
    failed[reason.ordinal()].increment();
  }

  @Override
  public void notOwnerRetry() {
    retries.increment();
  }

  @Override
  public void shardActivated(int shard, long epoch) {
    shardsActivated.increment();
  }

  @Override
  public void shardReleased(int shard) {
    shardsReleased.increment();
  }

  @Override
  public void entityActivated(String type, String entityId, FencingToken token) {
    TypeMeters m = type(type);
    m.active.incrementAndGet();
    m.activations.increment();
  }

  @Override
  public void entityDeactivated(String type, String entityId, FencingToken token) {
    TypeMeters m = type(type);
    m.active.decrementAndGet();
    m.deactivations.increment();
  }

  @Override
  public void fenced() {
    fencings.increment();
  }

  @Override
  public void messageRefused(String type, OverloadCause cause) {
    type(type).refused[cause.ordinal()].increment();
  }

  private TypeMeters type(String type) {
    TypeMeters m = types.get(type);
    return m != null ? m : types.computeIfAbsent(type, t -> {
      AtomicLong active = new AtomicLong();
      Gauge.builder("atoll.entities.active", active, AtomicLong::get).tag("type", t)
          .description("live activations of this entity type on this pod").register(registry);
      OverloadCause[] causes = OverloadCause.values();
      Counter[] refused = new Counter[causes.length];
      for (OverloadCause c : causes) {
        refused[c.ordinal()] = Counter.builder("atoll.messages.refused").tag("type", t).tag("cause", c.name())
            .description("messages to this pod's entities refused unhandled as overloaded, by cause")
            .register(registry);
      }
      return new TypeMeters(active,
          Counter.builder("atoll.entities.activations").tag("type", t)
              .description("activations of this entity type on this pod").register(registry),
          Counter.builder("atoll.entities.deactivations").tag("type", t)
              .description("ended activations (passivation, hand-off, failure, fencing)").register(registry),
          refused);
    });
  }
}
