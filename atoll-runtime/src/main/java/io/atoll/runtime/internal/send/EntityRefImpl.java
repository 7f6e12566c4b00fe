package io.atoll.runtime.internal.send;

import io.atoll.runtime.EntityRef;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import io.atoll.runtime.internal.host.TypeRuntime;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * The {@link EntityRef} of a pod. Immutable. Its stages are the messages' {@link Pending}s, which
 * the caller cannot complete.
 */
final class EntityRefImpl<M> implements EntityRef<M> {

  private final Router router;
  private final TypeRuntime t;
  private final EntityType<M> type;
  private final String id;

  /** A ref to {@code type/id} (run as {@code t}) sending through {@code router}. */
  EntityRefImpl(Router router, TypeRuntime t, EntityType<M> type, String id) {
    this.router = router;
    this.t = t;
    this.type = type;
    this.id = id;
  }

  @Override
  public String entityId() {
    return id;
  }

  @Override
  public EntityType<M> type() {
    return type;
  }

  @Override
  @SuppressWarnings("unchecked")
  public CompletionStage<Void> tell(M message) {
    Objects.requireNonNull(message, "message");
    return (CompletionStage<Void>) (CompletionStage<?>) router.send(t, id, message, false,
        router.sendTimeoutNanos());
  }

  @Override
  public <R> CompletionStage<R> ask(Function<Reply<R>, ? extends M> request) {
    return ask(request, router.askTimeoutNanos());
  }

  @Override
  public <R> CompletionStage<R> ask(Function<Reply<R>, ? extends M> request, Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
    }
    return ask(request, timeout.toNanos());
  }

  @SuppressWarnings("unchecked")
  private <R> CompletionStage<R> ask(Function<Reply<R>, ? extends M> request, long timeoutNanos) {
    Objects.requireNonNull(request, "request");
    return (CompletionStage<R>) (CompletionStage<?>) router.ask(t, id,
        p -> request.apply((Reply<R>) (Reply<?>) p), timeoutNanos);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <R> CompletionStage<R> ask(M message) {
    Objects.requireNonNull(message, "message");
    return (CompletionStage<R>) (CompletionStage<?>) router.send(t, id, message, true,
        router.askTimeoutNanos());
  }

  @Override
  public String toString() {
    return "EntityRef[" + type.name() + "/" + id + "]";
  }
}
