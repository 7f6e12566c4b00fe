package io.atoll.kv;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A node's metrics in a Micrometer {@link MeterRegistry}: {@code atoll.kv.commands{result=ok|error}}
 * (an error includes {@code -MOVED} and {@code -ASK} redirects), {@code atoll.kv.command.latency}
 * (a histogram of the time to execute a command, excluding network and queueing), and, once bound
 * to the node, {@code atoll.kv.slots.owned}. Micrometer is an optional dependency of atoll-kv.
 * Thread-safe; counting a command allocates nothing.
 */
public final class KvMetrics implements KvObserver {

  private final MeterRegistry registry;
  private final Counter ok;
  private final Counter errors;
  private final Timer latency;

  /** Registers the command meters in {@code registry}. */
  public KvMetrics(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
    ok = Counter.builder("atoll.kv.commands").tag("result", "ok").description("commands executed")
        .register(registry);
    errors = Counter.builder("atoll.kv.commands").tag("result", "error").description("commands executed")
        .register(registry);
    latency = Timer.builder("atoll.kv.command.latency").description("time to execute a command")
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(1_000))
        .maximumExpectedValue(Duration.ofSeconds(10)).register(registry);
  }

  /** Registers the gauges that read {@code node} at each scrape. @return this */
  public KvMetrics bind(KvServer node) {
    Gauge.builder("atoll.kv.slots.owned", node, KvServer::ownedSlots).description("slots this node owns")
        .strongReference(true).register(registry);
    Gauge.builder("atoll.kv.keys.held", node, KvServer::keysHeld)
        .description("keys answering TRYAGAIN because their hand-off batch timed out").strongReference(true)
        .register(registry);
    return this;
  }

  @Override
  public void command(boolean error, long nanos) {
    (error ? errors : ok).increment();
    latency.record(nanos, TimeUnit.NANOSECONDS);
  }
}
