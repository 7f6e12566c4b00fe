package io.atoll.runtime.internal;

import io.atoll.runtime.EntityRef;
import io.atoll.runtime.EntityType;
import io.atoll.runtime.Reply;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/** The {@link EntityRef} of a pod. Immutable. */
public final class RefImpl<M> implements EntityRef<M> {

  private final PodRuntime rt;
  private final TypeRuntime t;
  private final EntityType<M> type;
  private final String id;

  /** A ref to {@code type/id} sending from {@code rt}. */
  public RefImpl(PodRuntime rt, EntityType<M> type, String id) {
    this.rt = rt;
    this.t = rt.typeFor(type);
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
    return (CompletionStage<Void>) (CompletionStage<?>) rt.send(t, id, message, false,
        rt.settings.sendTimeout().toNanos());
  }

  @Override
  public <R> CompletionStage<R> ask(Function<Reply<R>, ? extends M> request) {
    return ask(request, rt.settings.askTimeout());
  }

  @Override
  @SuppressWarnings("unchecked")
  public <R> CompletionStage<R> ask(Function<Reply<R>, ? extends M> request, Duration timeout) {
    Objects.requireNonNull(request, "request");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
    }
    return (CompletionStage<R>) (CompletionStage<?>) rt.ask(t, id,
        p -> request.apply((Reply<R>) (Reply<?>) p), timeout.toNanos());
  }

  @Override
  @SuppressWarnings("unchecked")
  public <R> CompletionStage<R> ask(M message) {
    Objects.requireNonNull(message, "message");
    return (CompletionStage<R>) (CompletionStage<?>) rt.send(t, id, message, true,
        rt.settings.askTimeout().toNanos());
  }

  @Override
  public String toString() {
    return "EntityRef[" + type.name() + "/" + id + "]";
  }
}
