package io.atoll.runtime;

/**
 * Creates the behaviour of an entity when its first message arrives on the pod that owns its
 * shard (an activation). It runs on the entity's virtual thread and may block, e.g. to load the
 * entity's state using {@link EntityContext#token()} to claim it in a database.
 *
 * @param <M> the entity's message type
 */
@FunctionalInterface
public interface EntityFactory<M> {

  /**
   * Creates one activation's behaviour.
   *
   * @param context the new activation
   * @throws Exception to fail the message that caused the activation; the next message tries again
   */
  Entity<M> create(EntityContext context) throws Exception;
}
