package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import io.atoll.testkit.junit.AtollClusterExtension;
import io.atoll.testkit.junit.PodTemplate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Shards move while messages flow: nothing fails, nothing is lost, order holds. */
class HandoffTest {

  @RegisterExtension
  final AtollClusterExtension atoll = AtollClusterExtension.builder().shards(60).podTemplate(pods()).build();
  LocalCluster cluster;
  /** The entities' ids begin so: the counters' journal is one for the JVM, and outlives a test. */
  final String ids = "h-" + System.nanoTime() + "-";

  /** How the pods host the counters: each with a thread of its own, as a type is by default. */
  PodTemplate pods() {
    return new Counter.Pods();
  }

  /**
   * Whether the counters' local sends are handled on their senders' threads when they can; if
   * not, no message may be.
   */
  boolean inlineLocalSends() {
    return false;
  }

  @BeforeEach
  void start() {
    cluster = atoll.cluster();
  }

  /** Sends ordered tells to {@code entities} from {@code from} until stopped; returns per-entity counts. */
  static final class Load {
    final AtomicBoolean running = new AtomicBoolean(true);
    final Map<String, Long> sent = new ConcurrentHashMap<>();
    final List<Throwable> failures = new CopyOnWriteArrayList<>();
    final Thread thread;

    void awaitAll() {
      CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).orTimeout(20, TimeUnit.SECONDS).join();
    }

    final java.util.Queue<CompletableFuture<Void>> all = new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** The entities' ids: {@code prefix + n}. */
    final String prefix;

    /** The load's thread's name: unique in the JVM, so {@link Counter#handledOnThread} is this load's. */
    final String threadName;

    Load(Sharding from, String prefix, int sender, int entities) {
      this.prefix = prefix;
      this.threadName = "load-" + prefix + sender;
      thread = Thread.ofPlatform().name(threadName).start(() -> {
        long seq = 0;
        while (running.get()) {
          List<CompletableFuture<Void>> round = new ArrayList<>();
          for (int e = 0; e < entities; e++) {
            String id = prefix + e;
            round.add(from.entity(Counter.TYPE, id).tell(new Counter.Append(sender, seq)).toCompletableFuture()
                .exceptionally(t -> {
                  failures.add(t);
                  return null;
                }));
            sent.put(id, seq + 1);
          }
          seq++;
          all.addAll(round);
          if (seq % 20 == 0) {
            CompletableFuture.allOf(round.toArray(new CompletableFuture<?>[0])).join(); // bounded in flight
          }
        }
      });
    }

    void close() {
      running.set(false);
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Test
  void aPodJoiningUnderLoadTakesShardsWithoutFailingOrReorderingAMessage() throws Exception {
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    Load load = new Load(a, ids, 7, 40);
    try {
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> load.sent.size() == 40);
      Sharding c = cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(30));
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !c.servedShards().isEmpty());
    } finally {
      load.close();
    }
    load.awaitAll();
    checkLogs(load, 7);
    assertThat(b.servedShards()).isNotEmpty();
  }

  @Test
  void aPodStoppingGracefullyUnderLoadHandsOverWithoutFailingOrReorderingAMessage() throws Exception {
    Sharding a = cluster.addPod();
    Sharding b = cluster.addPod();
    Sharding c = cluster.addPod();
    cluster.awaitSettled(Duration.ofSeconds(20));
    Load load = new Load(a, ids, 9, 40);
    try {
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> load.sent.size() == 40);
      cluster.stopPod(c);
      cluster.awaitSettled(Duration.ofSeconds(30));
    } finally {
      load.close();
    }
    load.awaitAll();
    checkLogs(load, 9);
    assertThat(b.servedShards().size() + a.servedShards().size()).isEqualTo(60);
  }

  private void checkLogs(Load load, int sender) {
    assertThat(load.failures).as("failed sends").isEmpty();
    long onSender = Counter.handledOnThread(load.threadName);
    if (inlineLocalSends()) {
      assertThat(onSender).as("messages handled on their sender's thread").isPositive();
    } else {
      assertThat(onSender).as("messages handled on their sender's thread").isZero();
    }
    // Every acknowledged message was handled exactly once, in send order, across activations.
    for (int e = 0; e < 40; e++) {
      String id = load.prefix + e;
      List<Long> handled = Counter.journal(id, sender);
      long n = load.sent.get(id);
      assertThat(handled).as("journal of %s", id).hasSize((int) n);
      for (int i = 0; i < n; i++) {
        assertThat(handled.get(i)).as("message %s of %s: %s", i, id,
            handled.subList(Math.max(0, i - 8), Math.min(handled.size(), i + 8))).isEqualTo(i);
      }
    }
  }
}
