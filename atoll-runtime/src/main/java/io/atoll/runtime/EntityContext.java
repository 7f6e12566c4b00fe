package io.atoll.runtime;

import io.atoll.core.FencingToken;
import io.atoll.core.PodId;

/**
 * One activation of an entity, as its behaviour sees it. Valid from the factory call until the
 * activation ends; use it only from the entity's own handler thread.
 */
public interface EntityContext {

  /** The entity's id. */
  String entityId();

  /** The name of the entity's type. */
  String entityType();

  /**
   * The fencing token of this activation: its shard, the epoch at which the shard was given to
   * this pod, and the pod's lease generation. A later activation of the same entity anywhere
   * always carries a greater token (a greater epoch on another pod or after a hand-off; a greater
   * generation on this pod after its lease ran out and was renewed late), so a database that keeps
   * the greatest token it has seen per entity, and refuses writes with a smaller one, can never be
   * written by a stale instance. A new activation of an entity never starts on a pod while an
   * older one still runs a handler there.
   */
  FencingToken token();

  /** The pod hosting this activation. */
  PodId pod();

  /** The pod's sharding, to send messages to other entities. */
  Sharding sharding();

  /**
   * The reply handle of the message being handled if it was sent with {@link EntityRef#ask(Object)}
   * (for message types that cannot hold a {@link Reply}, such as protobuf messages); a handle that
   * answers nobody for a tell.
   */
  Reply<Object> reply();

  /** Ends this activation after the current message, without a termination message. */
  void passivate();
}
