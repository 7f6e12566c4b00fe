package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ExecutorLoopTest {

  final ExecutorLoop loop = new ExecutorLoop("test-loop");

  @AfterEach
  void stop() {
    loop.shutdown();
  }

  @Test
  void knowsItsOwnThreadAndRefusesOthers() throws Exception {
    assertThat(loop.onLoop()).isFalse();
    assertThatThrownBy(loop::checkOnLoop).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("expected: the manager's loop");
    assertThat(CompletableFuture.supplyAsync(loop::onLoop, loop).get(5, TimeUnit.SECONDS)).isTrue();
    CompletableFuture.runAsync(loop::checkOnLoop, loop).get(5, TimeUnit.SECONDS);
  }

  @Test
  void aTaskThatThrowsDoesNotStopTheLoopNorChangeItsThread() throws Exception {
    Thread before = CompletableFuture.supplyAsync(Thread::currentThread, loop).get(5, TimeUnit.SECONDS);
    loop.execute(() -> {
      throw new IllegalStateException("a failing task (expected in this test)");
    });
    Thread after = CompletableFuture.supplyAsync(Thread::currentThread, loop).get(5, TimeUnit.SECONDS);
    assertThat(after).isSameAs(before);
    assertThat(after.getName()).isEqualTo("test-loop");
    assertThat(after.isDaemon()).isTrue();
  }

  @Test
  void scheduledTasksRunAfterTheirDelayUnlessCancelled() throws Exception {
    CompletableFuture<Boolean> ran = new CompletableFuture<>();
    long start = System.nanoTime();
    loop.schedule(() -> ran.complete(loop.onLoop()), Duration.ofMillis(30));
    AtomicBoolean cancelledRan = new AtomicBoolean();
    loop.schedule(() -> cancelledRan.set(true), Duration.ofMillis(10)).cancel();
    assertThat(ran.get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(30).toNanos());
    assertThat(cancelledRan).isFalse();
  }

  @Test
  void aStoppedLoopRefusesTasks() {
    loop.shutdown();
    assertThatThrownBy(() -> loop.execute(() -> {})).isInstanceOf(RejectedExecutionException.class);
  }
}
