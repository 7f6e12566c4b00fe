package io.atoll.runtime;

import io.atoll.core.FencingToken;

/**
 * Hears what a pod does with its shards and entities: for metrics, logs and tests. Called on the
 * pod's own threads, possibly concurrently; implementations must be thread-safe, quick, and must
 * not throw or block. (One that throws anyway is logged and loses only that report: no message,
 * entity or hand-off depends on it.)
 */
public interface ShardingObserver {

  /** Hears nothing. */
  ShardingObserver NONE = new ShardingObserver() {};

  /** This pod started serving a shard under the claim of {@code epoch}. */
  default void shardActivated(int shard, long epoch) {}

  /** This pod stopped serving a shard (hand-off, fencing, graceful stop). */
  default void shardReleased(int shard) {}

  /** An activation of an entity started here with {@code token}. */
  default void entityActivated(String type, String entityId, FencingToken token) {}

  /** An activation of an entity ended here. */
  default void entityDeactivated(String type, String entityId, FencingToken token) {}

  /** This pod fenced itself: its lease ran out and it stopped serving every shard. */
  default void fenced() {}

  /**
   * This pod refused a message to one of its entities of {@code type} as overloaded, unhandled,
   * for {@code cause} (whoever sent it: this pod or another).
   */
  default void messageRefused(String type, OverloadCause cause) {}

  // Messages sent from this pod. Called once per message: implementations must not allocate.

  /** A tell or an ask was sent from this pod (before it is routed). */
  default void messageSent() {}

  /**
   * A message sent from this pod was handled: a tell's handler returned, or an ask was answered
   * after {@code nanos} (by the pod's ticker, from the send).
   */
  default void messageHandled(boolean ask, long nanos) {}

  /** A message sent from this pod failed for {@code reason}. */
  default void messageFailed(DeliveryException.Reason reason) {}

  /**
   * A message sent from this pod was refused by the pod it was sent to (a {@code NotOwner}, or a
   * local shard being handed off) and goes back to its shard's buffer to be sent again.
   */
  default void notOwnerRetry() {}
}
