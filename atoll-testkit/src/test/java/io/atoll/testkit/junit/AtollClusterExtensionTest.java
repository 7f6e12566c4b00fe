package io.atoll.testkit.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.Entity;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.ClusterChecks;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.VirtualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension in both forms: a fresh, settled cluster per test, closed after it. */
class AtollClusterExtensionTest {

  /** An entity answering its own id, length included. */
  public record Echo(String text, Reply<String> reply) {}

  static final EntityType<Echo> ECHO = EntityType.of("echo", Echo.class);

  /** Pods that host {@link #ECHO}. */
  public static final class EchoPods implements PodTemplate {
    /** Creates it. */
    public EchoPods() {}

    @Override
    public Sharding.Builder apply(Sharding.Builder b) {
      return b.register(ECHO, ctx -> (Entity<Echo>) (m, c) -> m.reply().send(c.entityId() + ":" + m.text()));
    }
  }

  static final List<LocalCluster> SEEN = new ArrayList<>();

  @AfterAll
  static void everyClusterWasClosedAfterItsTest() {
    assertThat(SEEN).hasSizeGreaterThanOrEqualTo(2).allMatch(LocalCluster::isClosed);
  }

  @Nested
  @AtollCluster(shards = 12, pods = 2, podTemplate = EchoPods.class)
  class Annotated {

    @Test
    void startsTheAnnotatedPodsSettledAndInjectsTheCluster(LocalCluster cluster) throws Exception {
      SEEN.add(cluster);
      assertThat(cluster.pods()).hasSize(2);
      assertThat(cluster.manager().config().size()).isEqualTo(12);
      assertThat(ClusterChecks.everyShardOwnedByALivePod(cluster.manager().config(), 2)).isTrue();
      Awaitility.await().atMost(Duration.ofSeconds(20))
          .until(() -> ClusterChecks.balanced(cluster.manager().config(), 2));
      Sharding client = cluster.addClient();
      assertThat(client.entity(ECHO, "e-1").<String>ask(r -> new Echo("hi", r)).toCompletableFuture()
          .get(10, TimeUnit.SECONDS)).isEqualTo("e-1:hi");
    }

    @Test
    @AtollCluster(shards = 5)
    void aMethodsAnnotationOverridesTheClasss(LocalCluster cluster) {
      SEEN.add(cluster);
      assertThat(cluster.pods()).isEmpty();
      assertThat(cluster.settings().numberOfShards()).isEqualTo(5);
      assertThat(ClusterChecks.everyShardOwnedByALivePod(cluster.manager().config())).isFalse();
    }
  }

  @Nested
  class Registered {

    final VirtualTicker clock = new VirtualTicker();

    @RegisterExtension
    final AtollClusterExtension atoll = AtollClusterExtension.builder().shards(8).pods(1)
        .podTemplate(new EchoPods()).ticker(clock).build();

    @Test
    void givesTheCurrentClusterByAccessorAndParameterAlike(LocalCluster injected) throws Exception {
      SEEN.add(injected);
      assertThat(atoll.cluster()).isSameAs(injected);
      Sharding pod = injected.pods().get(0);
      assertThat(pod.servedShards()).hasSize(8);
      assertThat(pod.holdsLease()).isTrue(); // on the virtual clock, which nobody moved
      assertThat(pod.entity(ECHO, "x").<String>ask(r -> new Echo("y", r)).toCompletableFuture()
          .get(10, TimeUnit.SECONDS)).isEqualTo("x:y");
    }

    @Test
    void refusesSettingsOutOfRange() {
      assertThatThrownBy(() -> AtollClusterExtension.builder().pods(-1))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: 0..16");
      assertThatThrownBy(() -> AtollClusterExtension.builder().shards(0))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: 1..");
    }
  }
}
