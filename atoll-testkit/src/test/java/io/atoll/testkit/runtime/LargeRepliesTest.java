package io.atoll.testkit.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.runtime.DeliveryException;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.Sharding;
import io.atoll.testkit.LocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Large answers on a pod stream: many of them together never make one gRPC message over the
 * limit, and one answer too large fails only its own ask, with a clear error.
 */
class LargeRepliesTest {

  sealed interface Msg permits Answer {}

  /** Answers {@code bytes} bytes, after the test opens the gate. */
  record Answer(int bytes, Reply<Blob> reply) implements Msg {}

  record Blob(byte[] data) {}

  static final EntityType<Msg> TYPE = EntityType.of("answers", Msg.class);

  final CountDownLatch gate = new CountDownLatch(1);

  Sharding.Builder hosting(Sharding.Builder b) {
    return b.maxMessageBytes(16 << 20).register(TYPE, ctx -> (msg, c) -> {
      switch (msg) {
        case Answer a -> {
          gate.await(20, TimeUnit.SECONDS);
          a.reply().send(new Blob(new byte[a.bytes()]));
        }
      }
    });
  }

  private static List<CompletableFuture<Blob>> ask(Sharding client, int count, int bytes, String prefix) {
    List<CompletableFuture<Blob>> all = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      all.add(client.entity(TYPE, prefix + i).<Blob>ask(r -> new Answer(bytes, r)).toCompletableFuture());
    }
    return all;
  }

  @Test
  void manyLargeAnswersReleasedAtOnceAllArrive() throws Exception {
    try (LocalCluster cluster = LocalCluster.builder().shards(8).podTemplate(this::hosting).start()) {
      cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      Sharding client = cluster.addClient(b -> b.maxInFlight(4096).askTimeout(Duration.ofSeconds(20)));
      // 1,000 answers of 64 KiB (62.5 MiB) become ready at the same moment on one stream.
      List<CompletableFuture<Blob>> asks = ask(client, 1000, 64 << 10, "e");
      gate.countDown();
      for (CompletableFuture<Blob> f : asks) {
        assertThat(f.get(20, TimeUnit.SECONDS).data()).hasSize(64 << 10);
      }
    }
  }

  @Test
  void anAnswerOverTheLimitFailsOnlyItsOwnAsk() throws Exception {
    try (LocalCluster cluster = LocalCluster.builder().shards(8).podTemplate(this::hosting).start()) {
      cluster.addPod();
      cluster.awaitSettled(Duration.ofSeconds(10));
      Sharding client = cluster.addClient(b -> b.askTimeout(Duration.ofSeconds(20)));
      List<CompletableFuture<Blob>> others = ask(client, 50, 1024, "small");
      // 40 MiB: over the pod's 16 MiB max message and over gRPC's 32 MiB message limit.
      CompletableFuture<Blob> huge = client.entity(TYPE, "huge")
          .<Blob>ask(r -> new Answer(40 << 20, r)).toCompletableFuture();
      gate.countDown();
      try {
        huge.get(20, TimeUnit.SECONDS);
        throw new AssertionError("an answer of 40 MiB arrived");
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOfSatisfying(DeliveryException.class, d -> {
          assertThat(d.reason()).isEqualTo(DeliveryException.Reason.MESSAGE_TOO_LARGE);
          assertThat(d.getMessage()).contains("answers/huge").contains("bytes encoded")
              .contains("expected: <= " + (16 << 20));
        });
      }
      for (CompletableFuture<Blob> f : others) {
        assertThat(f.get(20, TimeUnit.SECONDS).data()).hasSize(1024);
      }
    }
  }
}
