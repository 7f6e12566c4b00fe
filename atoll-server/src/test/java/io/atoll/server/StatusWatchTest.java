package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.runtime.Sharding;
import io.atoll.server.demo.Account;
import io.atoll.store.file.FileAssignmentStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code atoll status --watch} against a real manager over gRPC: a redraw on every change. */
class StatusWatchTest {

  @TempDir
  Path dir;

  @Test
  void redrawsInPlaceWhenAPodJoinsAndItsShardsMove() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    try (ShardManager manager = ShardManager.start(ManagerSettings.defaults().withNumberOfShards(12),
        FileAssignmentStore.open(dir), "127.0.0.1", 0)) {
      CompletableFuture<Integer> watching = CompletableFuture.supplyAsync(() -> {
        try {
          return new StatusWatch(manager.address(), out, true).run(3);
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bytes.toString(StandardCharsets.UTF_8)
          .contains("0 pods"));
      try (Sharding pod = Sharding.builder().manager(manager.address().toString())
          .register(Account.TYPE, Account.factory(null)).start()) {
        assertThat(watching.get(20, TimeUnit.SECONDS)).isZero();
        String text = bytes.toString(StandardCharsets.UTF_8);
        String[] frames = text.split("\033\\[H\033\\[2J", -1);
        assertThat(frames).hasSize(4); // nothing before the first clear, then three redraws
        assertThat(frames[1]).startsWith("cluster: 12 shards, epoch").contains("0 pods");
        assertThat(frames[3]).contains("1 pods", pod.podId().toString()).contains("updated ");
      }
    }
  }

  @Test
  void saysSoWhileTheManagerCannotBeReached() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    Thread t = Thread.ofVirtual().start(() -> {
      try {
        new StatusWatch(io.atoll.core.PodAddress.parse("127.0.0.1:1"), out, false).run(0);
      } catch (InterruptedException e) {
        // stopped
      }
    });
    try {
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bytes.toString(StandardCharsets.UTF_8)
          .contains("the shard manager at 127.0.0.1:1 did not answer"));
    } finally {
      t.interrupt();
      t.join(5000);
    }
    assertThat(t.isAlive()).isFalse();
  }
}
