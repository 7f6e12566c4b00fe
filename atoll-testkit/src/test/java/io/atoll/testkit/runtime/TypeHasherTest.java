package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.ClusterConfig;
import io.atoll.core.ShardHasher;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * An entity type with a hasher of its own ({@link EntityType#withHasher}) over real pods and a
 * real manager on loopback: its messages go to the shard its hasher picks in its role's space,
 * on the pod that owns that shard, whichever pod sends them (the receiver checks the shard with
 * the type's hasher too), while a type of the same role without one keeps the pod's hasher.
 */
class TypeHasherTest {

  /** "n-7" in local shard 8 of any space of more than 7 shards: not where the default puts most ids. */
  static final ShardHasher BY_NUMBER = (id, count) -> Integer.parseInt(id.substring(2)) % count + 1;

  static final EntityType<Counter.Msg> NUMBERED = EntityType.of("numbered", Counter.Msg.class)
      .withTerminationMessage(new Counter.Stop()).onRole("worker").withHasher(BY_NUMBER);
  static final EntityType<Counter.Msg> PLAIN = EntityType.of("plain", Counter.Msg.class)
      .withTerminationMessage(new Counter.Stop()).onRole("worker");

  private static final Pattern SHARD = Pattern.compile("shard=(\\d+)");

  @Test
  void aTypesOwnHasherPicksItsShardAndThePodThatOwnsItHandlesIt() throws Exception {
    try (LocalCluster c = LocalCluster.builder()
        .settings(LocalCluster.fastSettings(30).withSpaces(Spaces.parse("default=20,worker=10"))).start()) {
      Sharding web = c.addPod(b -> b.register(Counter.TYPE, ctx -> new Counter()));
      Sharding work1 = c.addPod(b -> b.register(NUMBERED, ctx -> new Counter()).register(PLAIN, ctx -> new Counter()));
      Sharding work2 = c.addPod(b -> b.register(NUMBERED, ctx -> new Counter()).register(PLAIN, ctx -> new Counter()));
      c.awaitSettled(Duration.ofSeconds(20));
      ClusterConfig config = c.manager().config();
      Space worker = config.spaces().of("worker");
      int differs = 0;
      for (int i = 0; i < 40; i++) {
        String id = "n-" + i;
        int expected = worker.first() + BY_NUMBER.shardOf(id, worker.count());
        String owner = config.owner(expected - 1).toString();
        for (Sharding from : List.of(web, work1, work2)) { // local and remote, through the inbound check
          String answer = from.entity(NUMBERED, id).<String>ask(Counter.Token::new).toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
          assertThat(shard(answer)).as("shard of %s asked from %s: %s", id, from.podId(), answer).isEqualTo(expected);
          assertThat(answer).as("pod of %s", id).startsWith(owner + " ");
        }
        int byPod = worker.first() + ShardHasher.DEFAULT.shardOf(id, worker.count());
        differs += byPod != expected ? 1 : 0;
        String plain = web.entity(PLAIN, id).<String>ask(Counter.Token::new).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(shard(plain)).as("a type of the same role without a hasher of its own: the pod's").isEqualTo(byPod);
        assertThat(plain).startsWith(config.owner(byPod - 1).toString() + " ");
      }
      assertThat(differs).as("ids the two hashers place apart (else this test shows nothing)").isGreaterThan(20);
      // A pod that first used the type with its own hasher refuses it with another (or none).
      assertThatThrownBy(() -> web.entity(NUMBERED.withHasher(ShardHasher.DEFAULT), "n-1"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("entity type 'numbered': hasher ")
          .hasMessageContaining("as first used or registered on this pod; every pod must give a type the same hasher");
    }
  }

  private static int shard(String tokenAnswer) {
    Matcher m = SHARD.matcher(tokenAnswer);
    assertThat(m.find()).as("a fencing token in %s", tokenAnswer).isTrue();
    return Integer.parseInt(m.group(1));
  }
}
