package io.atoll.runtime;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * A handle to one entity, wherever it lives. Cheap to create and to keep; thread-safe.
 *
 * <p>Messages sent through refs of one pod to one entity are handled in the order they were sent,
 * across buffering, hand-off and retries. Every send is bounded: it completes, or fails with a
 * {@link DeliveryException} saying why, within its timeout.
 *
 * @param <M> the entity's message type
 */
public interface EntityRef<M> {

  /** The entity's id. */
  String entityId();

  /** The entity's type. */
  EntityType<M> type();

  /**
   * Sends a message. The stage completes when the entity's handler has returned (the message was
   * handled), or fails with a {@link DeliveryException}; ignore it for fire-and-forget. A send
   * that fails before reaching the entity (timeout waiting for an owner, full buffer) was not
   * handled; only {@link DeliveryException.Reason#OUTCOME_UNKNOWN} leaves that open.
   */
  CompletionStage<Void> tell(M message);

  /**
   * Asks: builds a message holding a {@link Reply}, sends it, and completes with the entity's
   * answer, within the sharding's ask timeout.
   *
   * @param request builds the message from the reply handle, e.g. {@code Get::new}
   */
  <R> CompletionStage<R> ask(Function<Reply<R>, ? extends M> request);

  /** Like {@link #ask(Function)} with its own timeout. */
  <R> CompletionStage<R> ask(Function<Reply<R>, ? extends M> request, Duration timeout);

  /**
   * Asks with a message that holds no reply handle; the entity answers through
   * {@link EntityContext#reply()}. For message types such as protobuf messages.
   */
  <R> CompletionStage<R> ask(M message);
}
