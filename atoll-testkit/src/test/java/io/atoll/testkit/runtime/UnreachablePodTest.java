package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.PodAddress;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import io.atoll.testkit.net.TcpRelay;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A pod whose port nobody can reach, while its own connections (to the manager) work: it keeps
 * renewing, so its lease never runs out; before, its shards stayed on it for as long as the cut
 * lasted and every message to them waited. Now the manager, finding it unreachable, moves its
 * shards off it by hand-offs whose Unassign travels in the answers to its renewals.
 */
@AtollCluster(shards = 20, podTemplate = Counter.Pods.class)
class UnreachablePodTest {

  @Test
  void aPodCutOffOnItsPortHandsItsShardsOverThroughItsRenewalsAndGetsShardsAgainOnceReachable(LocalCluster cluster)
      throws Exception {
    LeaseTest.Timeline timeline = new LeaseTest.Timeline();
    AtomicBoolean aFenced = new AtomicBoolean();
    int port = io.atoll.testkit.net.Ports.free();
    try (TcpRelay inbound = TcpRelay.to(port)) {
      // Everyone (the manager, the other pod, the client) reaches pod a through the relay.
      Sharding a = cluster.addPod(x -> x.port(port).advertise(new PodAddress("127.0.0.1", inbound.port()))
          .observer(timeline.observer("a", aFenced)));
      Sharding b = cluster.addPod(x -> x.observer(timeline.observer("b", new AtomicBoolean())));
      Sharding client = cluster.addClient();
      cluster.awaitSettled(Duration.ofSeconds(15));
      List<Integer> aShards = a.servedShards();
      assertThat(aShards).isNotEmpty();
      String onA = null;
      for (int i = 0; onA == null; i++) {
        if (aShards.contains(io.atoll.core.ShardHasher.DEFAULT.shardOf("c" + i, 20))) {
          onA = "c" + i;
        }
      }
      client.entity(Counter.TYPE, onA).tell(new Counter.Add(1)).toCompletableFuture().get(10, TimeUnit.SECONDS);

      inbound.mode(TcpRelay.Mode.DROP); // every byte into a is lost; a's own connections work
      // Sent into the black hole: it holds its shard's later messages back (send order) until the
      // shard has moved and a while more; then it is given up, its outcome unknown.
      java.util.concurrent.CompletableFuture<Void> lost = client.entity(Counter.TYPE, onA).tell(new Counter.Add(1))
          .toCompletableFuture();
      Awaitility.await("pod a's shards moved to pod b while a is cut off").atMost(Duration.ofSeconds(30))
          .until(() -> a.servedShards().isEmpty() && b.servedShards().size() == 20);
      assertThat(aFenced).as("a hand-off, not a lease that ran out").isFalse();
      String id = onA;
      Long value = client.entity(Counter.TYPE, id).<Long>ask(Counter.Get::new)
          .toCompletableFuture().get(30, TimeUnit.SECONDS);
      // b serves every shard: the answer is b's new activation (the counter keeps no state across pods)
      assertThat(value).as("answered while a is still cut off").isNotNull();
      assertThat(lost).isCompletedExceptionally();
      Throwable why = lost.handle((v, e) -> e instanceof java.util.concurrent.CompletionException ? e.getCause() : e)
          .get();
      assertThat(why).isInstanceOf(io.atoll.runtime.DeliveryException.class).hasMessageContaining("moved");
      assertThat(((io.atoll.runtime.DeliveryException) why).reason())
          .isEqualTo(io.atoll.runtime.DeliveryException.Reason.OUTCOME_UNKNOWN);
      assertThat(inbound.mode()).as("still cut off").isEqualTo(TcpRelay.Mode.DROP);

      inbound.mode(TcpRelay.Mode.PASS);
      Awaitility.await("pod a gets shards again once reachable").atMost(Duration.ofSeconds(30))
          .until(() -> !a.servedShards().isEmpty());
      synchronized (timeline) {
        assertThat(timeline.violations).isEmpty();
      }
    }
  }
}
