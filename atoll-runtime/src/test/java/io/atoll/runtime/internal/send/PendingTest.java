package io.atoll.runtime.internal.send;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.runtime.DeliveryException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** A send's future: only the pod decides its outcome. */
class PendingTest {

  private final Fakes.Owner owner = new Fakes.Owner();

  private Pending pending() {
    return Fakes.pending(owner, 1_000, 10_000, "m");
  }

  @Test
  void aCallerCannotCompleteCancelOrOverwriteIt() {
    Pending p = pending();
    CompletableFuture<Object> f = ((CompletionStage<Object>) p).toCompletableFuture();
    assertThatThrownBy(() -> f.complete("forged")).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("decided by the pod");
    assertThatThrownBy(() -> f.completeExceptionally(new RuntimeException()))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> f.cancel(true)).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> f.obtrudeValue("x")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> f.obtrudeException(new RuntimeException()))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> f.completeAsync(() -> "x")).isInstanceOf(UnsupportedOperationException.class);
    assertThat(p.isDone()).isFalse();
    assertThat(owner.completed).isEmpty();
  }

  @Test
  void theAnswerCompletesItOnceAndReportsItOnce() throws Exception {
    Pending p = pending();
    p.send("answer");
    p.send("again");
    p.fail("too late");
    assertThat(p.get()).isEqualTo("answer");
    assertThat(owner.completed).containsExactly(p);
  }

  @Test
  void aFailureCarriesTheReasonAndNamesTheEntity() {
    Pending p = pending();
    p.fail("no such account");
    assertThat(p).isCompletedExceptionally();
    assertThatThrownBy(p::get).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(DeliveryException.class)
        .hasRootCauseMessage("tell to t/e (shard 1) failed: no such account");
  }

  @Test
  void orTimeoutTimesOutACopyAndLeavesTheSendAlone() throws Exception {
    Pending p = pending();
    CompletableFuture<Object> copy = p.orTimeout(10, TimeUnit.MILLISECONDS);
    assertThat(copy).isNotSameAs(p);
    assertThatThrownBy(() -> copy.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(TimeoutException.class);
    assertThat(p.isDone()).isFalse();
    CompletableFuture<Object> fallback = p.completeOnTimeout("fallback", 10, TimeUnit.MILLISECONDS);
    assertThat(fallback.get(5, TimeUnit.SECONDS)).isEqualTo("fallback");
    assertThat(p.isDone()).isFalse();
  }

  @Test
  void aTellIsAcknowledgedWhenHandledAndAnAskOnlyByItsAnswer() throws Exception {
    Pending tell = pending();
    tell.handled();
    assertThat(tell.get()).isNull();
    assertThat(owner.resolved).containsExactly(tell);
    Pending ask = new Pending(owner, Fakes.TYPE, "e", 1, "m", true, 10_000_000_000L, 1_000);
    ask.handled();
    assertThat(ask.isDone()).as("an ask waits for its answer").isFalse();
    ask.send(42);
    assertThat(ask.get()).isEqualTo(42);
  }

  @Test
  void aWaitingPlatformThreadGetsAnAnswerThatComesDuringOrAfterItsSpin() throws Exception {
    Pending early = pending();
    Pending late = pending();
    Thread answerer = Thread.ofVirtual().start(() -> early.send("early"));
    assertThat(early.get(10, TimeUnit.SECONDS)).isEqualTo("early");
    answerer.join();
    // The waiter may still be spinning or already parked when the answer comes: both must see it.
    CompletableFuture<Object> got = CompletableFuture.supplyAsync(late::join, r -> Thread.ofPlatform().start(r));
    late.send("late");
    assertThat(got.get(10, TimeUnit.SECONDS)).isEqualTo("late");
  }

  @Test
  void aWaitStillTimesOutAfterTheSpin() {
    Pending p = pending();
    assertThatThrownBy(() -> p.get(1, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
    assertThat(p.isDone()).isFalse();
  }
}
