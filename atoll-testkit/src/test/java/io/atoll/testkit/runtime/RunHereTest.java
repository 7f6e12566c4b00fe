package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Where a pod runs a handler. With {@code withInlineLocalSends}, a local send to an idle, active
 * entity is handled on the sender's own thread before the send returns; a first message, a
 * handler's sends, a continuation the pod runs, and messages from other pods go to the drains.
 * Without it, no handler ever runs on a sender's thread.
 */
class RunHereTest {

  private static String me() {
    return Counter.describe(Thread.currentThread());
  }

  private static String where(Sharding s, String id) throws Exception {
    return s.entity(Counter.TYPE, id).<String>ask(r -> new Counter.Where(r, null)).toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
  }

  /** Activates {@code id} (its first message runs on a drain) and waits for it. */
  private static void activate(Sharding s, String id) throws Exception {
    s.entity(Counter.TYPE, id).tell(new Counter.Add(0)).toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  /**
   * Activates {@code id} and waits until a send of this thread is handled on it: the drain that
   * activated it may still hold it for a moment after answering. From then on the entity is idle
   * whenever this thread's send returns.
   */
  private static void activeAndIdle(Sharding s, String id) throws Exception {
    activate(s, id);
    Awaitility.await().pollInSameThread().atMost(Duration.ofSeconds(5)).until(() -> where(s, id).equals(me()));
  }

  @Nested
  @AtollCluster(shards = 8, podTemplate = Counter.InlinePods.class)
  class InlineLocalSends {

    @Test
    void aLocalSendToAnIdleActiveEntityIsHandledOnTheSendersThreadBeforeTheSendReturns(LocalCluster cluster)
        throws Exception {
      Sharding pod = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      String id = "here-" + System.nanoTime();
      assertThat(where(pod, id)).as("the first message activates the entity on a drain").endsWith(" virtual");
      activeAndIdle(pod, id);

      CompletableFuture<String> where = pod.entity(Counter.TYPE, id).<String>ask(r -> new Counter.Where(r, null))
          .toCompletableFuture();
      assertThat(where).as("answered before the ask returned").isDone();
      assertThat(where.get()).isEqualTo(me());
      CompletableFuture<Void> told = pod.entity(Counter.TYPE, id).tell(new Counter.Add(3)).toCompletableFuture();
      assertThat(told).isDone();
      assertThat(pod.entity(Counter.TYPE, id).<Long>ask(Counter.Get::new).toCompletableFuture().get())
          .isEqualTo(3);
    }

    @Test
    void aHandlersSendGoesToTheDrains(LocalCluster cluster) throws Exception {
      Sharding pod = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      String relay = "relay-" + System.nanoTime();
      String target = "target-" + System.nanoTime();
      activeAndIdle(pod, relay);
      activeAndIdle(pod, target); // so that only the mark keeps the relay's send off this thread
      String[] parts = pod.entity(Counter.TYPE, relay).<String>ask(r -> new Counter.Where(r, target))
          .toCompletableFuture().get(5, TimeUnit.SECONDS).split("\\|");
      assertThat(parts[0]).isEqualTo(me());
      assertThat(parts[1]).as("the relayed entity's thread: a drain, not the relay's").endsWith(" virtual");
    }

    @Test
    void aContinuationThePodRunsAsAnAnswerArrivesSendsToTheDrains(LocalCluster cluster) throws Exception {
      Sharding a = cluster.addPod();
      Sharding b = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(20));
      String remote = RoutingTest.idOwnedBy(b, a);
      String local = RoutingTest.idOwnedBy(a, a);
      activeAndIdle(a, local);
      String key = "chain-" + System.nanoTime();
      CountDownLatch gate = new CountDownLatch(1);
      CountDownLatch entered = new CountDownLatch(1);
      Counter.LATCHES.put(key, gate);
      Counter.ENTERED.put(key, entered);
      try {
        // The remote tell is acknowledged only once the gate opens, long after the continuation is
        // in place: pod a's network thread completes it and runs the continuation, whose local
        // send must not run the handler there.
        CompletableFuture<String> chained = a.entity(Counter.TYPE, remote).tell(new Counter.Block(key))
            .toCompletableFuture()
            .thenCompose(v -> a.entity(Counter.TYPE, local).<String>ask(r -> new Counter.Where(r, null)));
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        gate.countDown();
        assertThat(chained.get(5, TimeUnit.SECONDS)).as("handled on a drain").endsWith(" virtual");
      } finally {
        gate.countDown();
        Counter.LATCHES.remove(key);
        Counter.ENTERED.remove(key);
      }
    }

    @Test
    void aMessageFromAnotherPodIsHandledOnADrainNotOnTheStreamsThread(LocalCluster cluster) throws Exception {
      cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      Sharding client = cluster.addClient();
      String id = "remote-" + System.nanoTime();
      where(client, id);
      assertThat(where(client, id)).endsWith(" virtual");
    }

    @Test
    void aHandlerThatBlocksAnywayBlocksItsSenderAndNoOneElse(LocalCluster cluster) throws Exception {
      Sharding pod = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      String key = "inline-block-" + System.nanoTime();
      CountDownLatch gate = new CountDownLatch(1);
      CountDownLatch entered = new CountDownLatch(1);
      Counter.LATCHES.put(key, gate);
      Counter.ENTERED.put(key, entered);
      try {
        String id = "blocks-" + System.nanoTime();
        activeAndIdle(pod, id);
        CompletableFuture<Void> sender = CompletableFuture.runAsync(
            () -> pod.entity(Counter.TYPE, id).tell(new Counter.Block(key)), r -> Thread.ofPlatform().start(r));
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(sender).as("the sender runs the blocked handler").isNotDone();

        List<CompletableFuture<Long>> others = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
          String other = "free-" + i + "-" + System.nanoTime();
          pod.entity(Counter.TYPE, other).tell(new Counter.Add(i));
          others.add(pod.entity(Counter.TYPE, other).<Long>ask(Counter.Get::new).toCompletableFuture());
        }
        for (int i = 0; i < others.size(); i++) {
          assertThat(others.get(i).get(5, TimeUnit.SECONDS)).isEqualTo(i);
        }
        CompletableFuture<Void> behind = pod.entity(Counter.TYPE, id).tell(new Counter.Add(5)).toCompletableFuture();
        assertThat(behind).as("the blocked entity's next message waits for it").isNotDone();

        gate.countDown();
        sender.get(5, TimeUnit.SECONDS);
        behind.get(5, TimeUnit.SECONDS);
        assertThat(pod.entity(Counter.TYPE, id).<Long>ask(Counter.Get::new).toCompletableFuture()
            .get(5, TimeUnit.SECONDS)).isEqualTo(5);
      } finally {
        gate.countDown();
        Counter.LATCHES.remove(key);
        Counter.ENTERED.remove(key);
      }
    }
  }

  @Nested
  @AtollCluster(shards = 8, podTemplate = Counter.SharedDrainPods.class)
  class NonBlockingHandlers {

    @Test
    void areRunOnTheDrainsNeverOnTheSendersThread(LocalCluster cluster) throws Exception {
      Sharding pod = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      String id = "drained-" + System.nanoTime();
      activate(pod, id);
      assertThat(where(pod, id)).isNotEqualTo(me()).endsWith(" virtual");
    }
  }

  @Nested
  @AtollCluster(shards = 8, podTemplate = Counter.Pods.class)
  class HandlersThatMayBlock {

    @Test
    void areRunOnTheEntitysOwnThreadNeverOnTheSenders(LocalCluster cluster) throws Exception {
      Sharding pod = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      String id = "own-" + System.nanoTime();
      activate(pod, id);
      assertThat(where(pod, id)).isNotEqualTo(me()).endsWith(" virtual");
    }
  }
}
