package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ShardHasher;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Messages for shards without an owner wait, bounded, and flow in order once an owner appears. */
@AtollCluster(shards = 20, podTemplate = Counter.Pods.class)
class BufferingTest {

  LocalCluster cluster;

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
  }

  private Sharding client(java.util.function.UnaryOperator<Sharding.Builder> custom) {
    return cluster.addClient(custom);
  }

  @Test
  void messagesWaitForAnOwnerAndFlowInOrderWhenAPodJoins() throws Exception {
    Sharding client = client(b -> b);
    List<CompletableFuture<Void>> sent = new ArrayList<>();
    for (long i = 0; i < 50; i++) {
      for (int e = 0; e < 10; e++) {
        sent.add(client.entity(Counter.TYPE, "buf-" + e).tell(new Counter.Append(3, i)).toCompletableFuture());
      }
    }
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> client.inFlight() == 500);
    assertThat(sent).noneMatch(CompletableFuture::isDone);
    cluster.addPod();
    CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0])).get(20, TimeUnit.SECONDS);
    for (int e = 0; e < 10; e++) {
      List<Long> handled = Counter.journal("buf-" + e, 3);
      assertThat(handled).hasSize(50).isSorted().doesNotHaveDuplicates();
    }
  }

  @Test
  void aFullShardBufferFailsTheNextSendAtOnceAndSaysWhy() {
    Sharding client = client(b -> b.bufferSize(5).sendTimeout(Duration.ofSeconds(1)));
    String[] sameShard = idsInOneShard(6, client.numberOfShards());
    for (int i = 0; i < 5; i++) {
      client.entity(Counter.TYPE, sameShard[i]).tell(new Counter.Add(1));
    }
    CompletableFuture<Void> sixth = client.entity(Counter.TYPE, sameShard[5]).tell(new Counter.Add(1))
        .toCompletableFuture();
    assertThat(sixth).isCompletedExceptionally();
    assertThatThrownBy(sixth::join).cause().isInstanceOfSatisfying(DeliveryException.class, e -> {
      assertThat(e.reason()).isEqualTo(DeliveryException.Reason.BUFFER_FULL);
      assertThat(e).hasMessageContaining("buffer is full").hasMessageContaining("nothing was sent");
    });
  }

  @Test
  void aSendWithoutAnOwnerTimesOutSayingWhereItWaited() {
    Sharding client = client(b -> b.sendTimeout(Duration.ofMillis(300)));
    CompletableFuture<Void> f = client.entity(Counter.TYPE, "lonely").tell(new Counter.Add(1)).toCompletableFuture();
    assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
        .isInstanceOfSatisfying(DeliveryException.class, e -> {
          assertThat(e.reason()).isEqualTo(DeliveryException.Reason.TIMEOUT);
          assertThat(e).hasMessageContaining("counter/lonely").hasMessageContaining("timed out after")
              .hasMessageContaining("buffer");
        });
    assertThat(client.inFlight()).isZero();
  }

  static String[] idsInOneShard(int n, int shards) {
    String[] out = new String[n];
    int target = ShardHasher.DEFAULT.shardOf("x-0", shards);
    int found = 0;
    for (int i = 0; found < n; i++) {
      String id = "x-" + i;
      if (ShardHasher.DEFAULT.shardOf(id, shards) == target) {
        out[found++] = id;
      }
    }
    return out;
  }
}
