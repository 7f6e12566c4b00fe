package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.EntityRef;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

@AtollCluster(shards = 30, podTemplate = Counter.Pods.class)
class RoutingTest {

  @Test
  void tellsAndAsksReachEveryEntityFromEveryPod(LocalCluster cluster) throws Exception {
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    List<CompletableFuture<Void>> tells = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      tells.add(a.entity(Counter.TYPE, "c-" + i).tell(new Counter.Add(i)).toCompletableFuture());
    }
    CompletableFuture.allOf(tells.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
    for (int i = 0; i < 200; i++) {
      long v = b.entity(Counter.TYPE, "c-" + i).<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(v).as("counter c-%s", i).isEqualTo(i);
    }
    assertThat(a.activeEntities() + b.activeEntities()).isEqualTo(200);
    assertThat(a.activeEntities()).isPositive();
    assertThat(b.activeEntities()).isPositive();
  }

  @Test
  void messagesFromOnePodToOneEntityAreHandledInSendOrder(LocalCluster cluster) throws Exception {
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    // An entity on b, seen from a (remote), and one on a (local).
    String remote = idOwnedBy(b, a);
    String local = idOwnedBy(a, a);
    for (String id : List.of(remote, local)) {
      EntityRef<Counter.Msg> ref = a.entity(Counter.TYPE, id);
      CompletableFuture<Void> last = null;
      for (long i = 0; i < 2000; i++) {
        last = ref.tell(new Counter.Append(1, i)).toCompletableFuture();
      }
      last.get(10, TimeUnit.SECONDS);
      List<Long> log = ref.<List<Long>>ask(r -> new Counter.Log(r, 1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(log).hasSize(2000).isSorted();
    }
  }

  /** An entity id whose shard {@code owner} serves, as seen from {@code from}. */
  static String idOwnedBy(Sharding owner, Sharding from) {
    for (int i = 0; ; i++) {
      String id = "e-" + i;
      int shard = io.atoll.core.ShardHasher.DEFAULT.shardOf(id, from.numberOfShards());
      if (owner.servedShards().contains(shard)) {
        return id;
      }
    }
  }
}
