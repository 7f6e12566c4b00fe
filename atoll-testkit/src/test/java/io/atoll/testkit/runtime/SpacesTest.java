package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.Claim;
import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.Space;
import io.atoll.core.Spaces;
import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.Await;
import io.atoll.testkit.LocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Shard spaces over real pods and a real manager on loopback: the default space of web pods (the
 * counter type) and a "worker" space of worker pods (the job type), each placed only on its own
 * pods; a worker leaving moves nothing in the default space; a type nobody hosts, or whose role
 * has no space yet, waits and then fails with an error naming the type and the role; a pod of a
 * new role joining a running cluster gets a space appended for it and moves nothing else.
 */
class SpacesTest {

  static final EntityType<Counter.Msg> JOB = EntityType.of("job", Counter.Msg.class)
      .withTerminationMessage(new Counter.Stop()).onRole("worker");

  private static LocalCluster cluster() {
    return LocalCluster.builder()
        .settings(LocalCluster.fastSettings(30).withSpaces(Spaces.parse("default=20,worker=10")))
        .start();
  }

  private static Sharding web(LocalCluster c) {
    return c.addPod(b -> b.register(Counter.TYPE, ctx -> new Counter()));
  }

  private static Sharding worker(LocalCluster c) {
    return c.addPod(b -> b.register(JOB, ctx -> new Counter()));
  }

  @Test
  void eachSpaceLivesOnItsOwnPodsAndAWorkerLeavingMovesNothingOfTheWeb() throws Exception {
    try (LocalCluster c = cluster()) {
      Sharding web1 = web(c);
      Sharding web2 = web(c);
      Sharding work1 = worker(c);
      Sharding work2 = worker(c);
      c.awaitSettled(Duration.ofSeconds(20));
      ClusterConfig config = c.manager().config();
      Space def = config.spaces().of("");
      Space work = config.spaces().of("worker");
      assertThat(config.pod(work1.podId()).orElseThrow().pod().roles()).containsExactly("worker");
      assertThat(config.pod(web1.podId()).orElseThrow().pod().roles()).containsExactly("");
      assertThat(ownersOf(config, def)).containsOnly(web1.podId().toString(), web2.podId().toString());
      assertThat(ownersOf(config, work)).containsOnly(work1.podId().toString(), work2.podId().toString());
      assertThat(web1.servedShards()).allMatch(s -> def.contains(s - 1));
      assertThat(work2.servedShards()).allMatch(s -> work.contains(s - 1)).hasSize(5);

      // Both types answer from a pod of either role (and from each other's pods).
      for (int i = 0; i < 50; i++) {
        web1.entity(JOB, "j-" + i).tell(new Counter.Add(i)).toCompletableFuture().get(5, TimeUnit.SECONDS);
        work1.entity(Counter.TYPE, "c-" + i).tell(new Counter.Add(2L * i)).toCompletableFuture().get(5, TimeUnit.SECONDS);
      }
      for (int i = 0; i < 50; i++) {
        assertThat(work2.entity(JOB, "j-" + i).<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS))
            .isEqualTo(i);
        assertThat(web2.entity(Counter.TYPE, "c-" + i).<Long>ask(Counter.Get::new).toCompletableFuture()
            .get(5, TimeUnit.SECONDS)).isEqualTo(2L * i);
      }
      assertThat(work1.activeEntities() + work2.activeEntities()).isEqualTo(50);
      assertThat(web1.activeEntities() + web2.activeEntities()).isEqualTo(50);

      // A worker leaves: its shards go to the other worker; no claim of the default space changes.
      List<Claim> webClaims = claims(config, def);
      c.stopPod(work1);
      Await.until("the worker space on the remaining worker", Duration.ofSeconds(20), Duration.ofMillis(50),
          () -> ownersOf(c.manager().config(), work).equals(List.of(work2.podId().toString()))
              && work2.servedShards().size() == work.count());
      assertThat(claims(c.manager().config(), def)).isEqualTo(webClaims);
      for (int i = 0; i < 50; i++) {
        assertThat(web2.entity(JOB, "j-" + i).<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS))
            .as("job j-%s after the hand-off (kept if its shard stayed, anew if it moved)", i).isIn(0L, (long) i);
      }
    }
  }

  /**
   * Pods declare the types they host when they register; the manager keeps them with the pod, and
   * once no live pod hosts the worker space its types still come with the manager's config (for
   * {@code atoll status} to name them).
   */
  @Test
  void theManagerKeepsTheTypesPodsDeclareOnceNoLivePodHostsTheirSpace() throws Exception {
    try (LocalCluster c = cluster()) {
      web(c);
      Sharding work = worker(c);
      c.awaitSettled(Duration.ofSeconds(20));
      c.stopPod(work);
      Await.until("the worker gone", Duration.ofSeconds(20), Duration.ofMillis(50),
          () -> !c.manager().config().isActive(work.podId()));
      io.grpc.ManagedChannel channel = io.atoll.transport.grpc.Wire.channel(c.managerAddress());
      try {
        io.atoll.transport.grpc.proto.ConfigBytes answer = io.atoll.transport.grpc.proto.ShardManagerServiceGrpc
            .newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
            .getAssignments(io.atoll.transport.grpc.proto.GetAssignmentsRequest.getDefaultInstance());
        assertThat(answer.getEntityTypesList()).extracting(t -> t.getName() + "@" + t.getRole())
            .containsExactly("counter@", "job@worker");
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  void aTypeThatNoLivePodHostsFailsNamingTheTypeAndTheRole() throws Exception {
    try (LocalCluster c = cluster()) {
      Sharding web = web(c);
      Await.until("the default space owned", Duration.ofSeconds(20), Duration.ofMillis(50),
          () -> web.servedShards().size() == 20);
      assertThat(c.manager().config().unownedCount()).isEqualTo(10); // the worker space: nobody hosts it
      long start = System.nanoTime();
      assertThatThrownBy(() -> web.entity(JOB, "j-1").<Long>ask(Counter.Get::new, Duration.ofMillis(800))
          .toCompletableFuture().get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause().isInstanceOf(DeliveryException.class)
          .hasMessageContaining("ask to job/j-1")
          .hasMessageContaining("no live pod hosts role 'worker' of entity type 'job'");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(800));

      // It was buffered, not dropped: once a worker starts, a message sent before it joined arrives.
      var waiting = web.entity(JOB, "j-2").tell(new Counter.Add(7)).toCompletableFuture();
      Sharding work = worker(c);
      waiting.get(10, TimeUnit.SECONDS);
      assertThat(work.entity(JOB, "j-2").<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS))
          .isEqualTo(7);
    }
  }

  @Test
  void aTypeOnARoleWithoutASpaceWaitsForItThenFailsNamingTheTypeAndTheRole() throws Exception {
    try (LocalCluster c = cluster()) {
      Sharding web = web(c);
      EntityType<Counter.Msg> mail = EntityType.of("mail", Counter.Msg.class).onRole("mailer");
      long start = System.nanoTime();
      assertThatThrownBy(() -> web.entity(mail, "m-1").<Long>ask(Counter.Get::new, Duration.ofMillis(600))
          .toCompletableFuture().get(10, TimeUnit.SECONDS))
          .cause().isInstanceOf(DeliveryException.class)
          .hasMessageContaining("ask to mail/m-1")
          .hasMessageContaining("waiting for a shard space of role 'mailer'")
          .hasMessageContaining("entity type 'mail' is on role 'mailer', which has no shard space")
          .satisfies(e -> assertThat(((DeliveryException) e).reason()).isEqualTo(DeliveryException.Reason.TIMEOUT));
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(600));
      // A type this pod hosts on the default role cannot be sent to on another.
      assertThatThrownBy(() -> web.entity(Counter.TYPE.onRole("worker"), "c-1"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("entity type 'counter': role 'worker' (expected: '', as first used or registered");
    }
  }

  /**
   * A rolling update that brings a new entity type on pods of a new role: the manager appends a
   * space for the role when its first pod registers, the space lands on that pod alone, a message
   * sent before it joined (buffered on an older pod, which routes by the grown layout) and later
   * ones are handled there, and no shard of the older spaces moves.
   */
  @Test
  void aPodOfANewRoleJoiningARunningClusterGetsItsSpaceAndTheOlderPodsMoveNothing() throws Exception {
    EntityType<Counter.Msg> mail = EntityType.of("mail", Counter.Msg.class)
        .withTerminationMessage(new Counter.Stop()).onRole("mailer");
    try (LocalCluster c = LocalCluster.builder()
        .settings(LocalCluster.fastSettings(30).withSpaces(Spaces.parse("default=20,worker=10")).withNewSpaceShards(6))
        .start()) {
      Sharding web1 = web(c);
      Sharding web2 = web(c);
      Sharding work = worker(c);
      c.awaitSettled(Duration.ofSeconds(20));
      ClusterConfig settled = c.manager().config();
      List<Integer> served1 = web1.servedShards();
      List<Integer> served2 = web2.servedShards();
      List<Integer> servedW = work.servedShards();

      var early = web1.entity(mail, "m-0").tell(new Counter.Add(5)).toCompletableFuture();
      Sharding mailer = c.addPod(b -> b.register(mail, ctx -> new Counter()));
      Await.until("the mailer space on the mailer pod", Duration.ofSeconds(20), Duration.ofMillis(50),
          () -> mailer.servedShards().size() == 6);
      ClusterConfig grown = c.manager().config();
      assertThat(grown.spaces()).isEqualTo(Spaces.parse("default=20,worker=10,mailer=6"));
      assertThat(ownersOf(grown, grown.spaces().of("mailer"))).containsExactly(mailer.podId().toString());
      early.get(10, TimeUnit.SECONDS);
      for (int i = 0; i < 20; i++) {
        web2.entity(mail, "m-" + i).tell(new Counter.Add(i)).toCompletableFuture().get(5, TimeUnit.SECONDS);
      }
      assertThat(work.entity(mail, "m-0").<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS))
          .isEqualTo(5);
      assertThat(web1.entity(mail, "m-7").<Long>ask(Counter.Get::new).toCompletableFuture().get(5, TimeUnit.SECONDS))
          .isEqualTo(7);
      assertThat(mailer.activeEntities()).isEqualTo(20);

      // Every older pod took the grown layout, and nothing of the older spaces moved.
      Await.until("every pod's view grown", Duration.ofSeconds(10), Duration.ofMillis(50),
          () -> List.of(web1, web2, work).stream().allMatch(p -> p.numberOfShards() == 36));
      for (Space sp : settled.spaces().list()) {
        assertThat(claims(c.manager().config(), sp)).as("space %s", sp).isEqualTo(claims(settled, sp));
      }
      assertThat(web1.servedShards()).isEqualTo(served1);
      assertThat(web2.servedShards()).isEqualTo(served2);
      assertThat(work.servedShards()).isEqualTo(servedW);
    }
  }

  private static List<String> ownersOf(ClusterConfig config, Space sp) {
    List<String> owners = new ArrayList<>();
    for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
      PodEntry e = config.ownerEntry(pos);
      String o = e == null ? "none" : e.id().toString();
      if (!owners.contains(o)) {
        owners.add(o);
      }
    }
    owners.sort(null);
    return owners;
  }

  private static List<Claim> claims(ClusterConfig config, Space sp) {
    List<Claim> out = new ArrayList<>();
    for (int pos = sp.first(); pos < sp.first() + sp.count(); pos++) {
      out.add(config.claim(pos));
    }
    return out;
  }
}
