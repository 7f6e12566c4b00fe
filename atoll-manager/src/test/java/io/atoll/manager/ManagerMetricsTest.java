package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Ticker;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.metrics.ManagerMetrics;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.RegisterRequest;
import io.atoll.transport.grpc.proto.RenewLeaseRequest;
import io.atoll.transport.grpc.proto.RenewLeaseResponse;
import io.atoll.transport.grpc.proto.ShardManagerServiceGrpc;
import io.atoll.transport.grpc.proto.UnregisterRequest;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The manager's Micrometer metrics, counted by a real manager over gRPC with fake pods. */
class ManagerMetricsTest {

  @Test
  void countsShardsPerPodRenewalsDeparturesAndRounds() {
    MeterRegistry r = new SimpleMeterRegistry();
    ShardManager manager = ShardManager.start(ShardManagerTest.settings(8), new MemoryStoreThreadSafe(),
        PodHealth.LEASE_ONLY, "127.0.0.1", 0, Ticker.SYSTEM, new Random(1), new ManagerMetrics(r));
    ManagedChannel ch = Wire.channel(manager.address());
    try (FakePodServer a = new FakePodServer(1); FakePodServer b = new FakePodServer(2)) {
      var stub = ShardManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
      var credA = stub.register(RegisterRequest.newBuilder().setPod(Wire.info(a.pod)).build()).getCredential();
      var credB = stub.register(RegisterRequest.newBuilder().setPod(Wire.info(b.pod)).build()).getCredential();
      await().atMost(Duration.ofSeconds(10)).until(() -> shards(r, a) == 4 && shards(r, b) == 4);
      assertThat(r.get("atoll.manager.pods.active").gauge().value()).isEqualTo(2);
      assertThat(r.get("atoll.manager.epoch").gauge().value()).isEqualTo(manager.config().epoch());
      assertThat(r.get("atoll.manager.rebalance.rounds").tag("result", "moved").counter().count()).isPositive();
      assertThat(r.get("atoll.manager.rebalance.duration").timer().count()).isPositive();
      assertThat(r.get("atoll.manager.rebalance.shards.moved").counter().count()).isGreaterThanOrEqualTo(8);

      assertThat(stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(a.pod.id())).setCredential(credA)
          .build()).getStatus())
          .isEqualTo(RenewLeaseResponse.Status.RENEWED);
      assertThat(r.get("atoll.manager.lease.renewals").tag("result", "granted").counter().count()).isEqualTo(1);

      stub.unregister(UnregisterRequest.newBuilder().setPod(Wire.ref(b.pod.id())).setCredential(credB).build());
      await().atMost(Duration.ofSeconds(10)).until(() -> shards(r, a) == 8);
      assertThat(r.get("atoll.manager.pods.gone").tag("cause", "left").counter().count()).isEqualTo(1);
      assertThat(r.find("atoll.manager.shards").tag("pod", b.pod.id().toString()).gauge())
          .as("a pod that left has no gauge").isNull();
      assertThat(stub.renewLease(RenewLeaseRequest.newBuilder().setPod(Wire.ref(b.pod.id())).setCredential(credB)
          .build()).getStatus())
          .isEqualTo(RenewLeaseResponse.Status.UNKNOWN_POD);
      assertThat(r.get("atoll.manager.lease.renewals").tag("result", "refused").counter().count()).isEqualTo(1);
    } finally {
      Wire.close(ch);
      manager.close();
    }
  }

  private static double shards(MeterRegistry r, FakePodServer p) {
    var g = r.find("atoll.manager.shards").tag("pod", p.pod.id().toString()).gauge();
    return g == null ? -1 : g.value();
  }
}
