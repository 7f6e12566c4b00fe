package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.metrics.PodMetrics;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.testkit.net.TcpRelay;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** A pod's Micrometer metrics, counted by real pods on loopback. */
@AtollCluster(shards = 12, podTemplate = Counter.Pods.class)
class PodMetricsTest {

  @Test
  void countsSendsAnswersFailuresEntitiesAndShards(LocalCluster cluster) throws Exception {
    MeterRegistry ra = new SimpleMeterRegistry();
    MeterRegistry rb = new SimpleMeterRegistry();
    PodMetrics ma = new PodMetrics(ra);
    PodMetrics mb = new PodMetrics(rb);
    Sharding a = cluster.addPod(b -> b.observer(ma));
    Sharding b = cluster.addPod(b2 -> b2.observer(mb));
    ma.bind(a);
    mb.bind(b);
    cluster.awaitSettled(Duration.ofSeconds(20));

    List<CompletableFuture<?>> sends = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      sends.add(a.entity(Counter.TYPE, "e" + i).tell(new Counter.Add(1)).toCompletableFuture());
      sends.add(a.entity(Counter.TYPE, "e" + i).<Long>ask(Counter.Get::new).toCompletableFuture());
    }
    CompletableFuture.allOf(sends.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
    assertThatThrownBy(() -> a.entity(Counter.TYPE, "bad").tell(new Counter.Fail("boom")).toCompletableFuture()
        .get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);

    assertThat(ra.get("atoll.messages.sent").counter().count()).isEqualTo(81);
    // A message is counted just after its sender's stage completes: a caller woken by that
    // completion may read the counters a moment before they count it (CI once read 0 failed here).
    Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(ra.get("atoll.messages.handled").tag("kind", "tell").counter().count()).isEqualTo(40);
      assertThat(ra.get("atoll.messages.handled").tag("kind", "ask").counter().count()).isEqualTo(40);
      assertThat(ra.get("atoll.ask.latency").timer().count()).isEqualTo(40);
      assertThat(ra.get("atoll.messages.failed").tag("reason", "ENTITY_FAILED").counter().count()).isEqualTo(1);
    });
    assertThat(ra.get("atoll.ask.latency").timer().totalTime(TimeUnit.NANOSECONDS)).isPositive();
    assertThat(ra.get("atoll.messages.failed").tag("reason", "TIMEOUT").counter().count()).isZero();
    assertThat(rb.get("atoll.messages.sent").counter().count()).isZero(); // b only hosted

    // Entities live on both pods, 41 in all (the failed one restarted on its next message only).
    double live = ra.get("atoll.entities.active").tag("type", "counter").gauge().value()
        + rb.get("atoll.entities.active").tag("type", "counter").gauge().value();
    assertThat(live).isEqualTo(a.activeEntities() + b.activeEntities()).isEqualTo(40);
    assertThat(ra.get("atoll.entities.activations").tag("type", "counter").counter().count()
        + rb.get("atoll.entities.activations").tag("type", "counter").counter().count()).isEqualTo(41);
    assertThat(ra.get("atoll.entities.live").gauge().value()).isEqualTo(a.activeEntities());

    // Shards: every shard served by one of the two, the lease held, nothing waiting.
    assertThat(ra.get("atoll.shards.served").gauge().value() + rb.get("atoll.shards.served").gauge().value())
        .isEqualTo(12);
    assertThat(ra.get("atoll.pod.lease.held").gauge().value()).isEqualTo(1);
    assertThat(ra.get("atoll.messages.buffered").gauge().value()).isZero();
    assertThat(ra.get("atoll.messages.inflight").gauge().value()).isZero();
    assertThat(ra.get("atoll.pod.fencings").counter().count()).isZero();
  }

  @Test
  void bufferedMessagesAndTimeoutsAreCounted(LocalCluster cluster) throws Exception {
    MeterRegistry r = new SimpleMeterRegistry();
    PodMetrics m = new PodMetrics(r);
    // A client alone: no pod hosts anything, so every message waits in its shard's buffer.
    Sharding client = cluster.addClient(b -> b.observer(m).sendTimeout(Duration.ofMillis(400)));
    m.bind(client);
    CompletableFuture<Void> waiting = client.entity(Counter.TYPE, "nowhere").tell(new Counter.Add(1))
        .toCompletableFuture();
    CompletableFuture<Void> waiting2 = client.entity(Counter.TYPE, "nowhere-2").tell(new Counter.Add(1))
        .toCompletableFuture();
    assertThat(r.get("atoll.messages.buffered").gauge().value()).isEqualTo(2);
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> waiting.isDone() && waiting2.isDone());
    Awaitility.await().atMost(Duration.ofSeconds(5)) // counted just after the stage completes
        .until(() -> r.get("atoll.messages.failed").tag("reason", "TIMEOUT").counter().count() == 2);
    Awaitility.await().atMost(Duration.ofSeconds(5))
        .until(() -> r.get("atoll.messages.buffered").gauge().value() == 0);
  }

  @Test
  void countingAMessageAllocatesNothing() {
    PodMetrics m = new PodMetrics(new SimpleMeterRegistry());
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    for (int i = 0; i < 20_000; i++) { // warm up
      count(m, i);
    }
    long before = threads.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < 100_000; i++) {
      count(m, i);
    }
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(allocated).as("bytes allocated by 100,000 messages counted").isLessThan(100_000);
  }

  private static void count(PodMetrics m, int i) {
    m.messageSent();
    m.messageHandled(true, 1000 + i);
    m.messageHandled(false, 0);
    m.messageFailed(DeliveryException.Reason.TIMEOUT);
    m.notOwnerRetry();
  }

  @Test
  void aPodCutOffFromTheManagerCountsAFencingAndDropsItsLeaseGauge(LocalCluster cluster) throws Exception {
    MeterRegistry r = new SimpleMeterRegistry();
    PodMetrics m = new PodMetrics(r);
    TcpRelay relay = TcpRelay.to(cluster.managerAddress().port());
    try {
      Sharding a = cluster.addPod(x -> x.manager(relay.address()).observer(m));
      m.bind(a);
      cluster.addPod(x -> x);
      cluster.awaitSettled(Duration.ofSeconds(10));
      assertThat(r.get("atoll.pod.lease.held").gauge().value()).isEqualTo(1);
      assertThat(r.get("atoll.shards.served").gauge().value()).isPositive();
      relay.close(); // the manager, alive for the other pod, refuses this one
      Awaitility.await().atMost(Duration.ofSeconds(15))
          .until(() -> r.get("atoll.pod.fencings").counter().count() >= 1);
      assertThat(r.get("atoll.pod.lease.held").gauge().value()).isZero();
      assertThat(r.get("atoll.shards.served").gauge().value()).isZero();
      assertThat(r.get("atoll.shards.released").counter().count()).isPositive();
    } finally {
      relay.close();
    }
  }
}
