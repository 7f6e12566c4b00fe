package io.atoll.runtime;

/**
 * The behaviour of one entity: it handles the messages sent to it, one at a time.
 *
 * <p>Atoll calls {@link #onMessage} for one message at a time, in the order they arrived from each
 * sender pod, never concurrently, always with the happens-before edges needed to use plain fields
 * for state. The handler may block (JDBC, HTTP): it runs on a virtual thread, so a blocked entity
 * holds no platform thread, and an idle entity holds no thread at all.
 *
 * <p>A handler that returns has handled its message: for a {@link EntityRef#tell tell} that is
 * the acknowledgement its sender receives. A handler that throws fails the message (its sender
 * gets a {@link DeliveryException} with {@link DeliveryException.Reason#ENTITY_FAILED}) and
 * ends this activation: the next message starts a fresh one from the factory, as a restart.
 *
 * @param <M> the type of messages it handles
 */
@FunctionalInterface
public interface Entity<M> {

  /**
   * Handles one message.
   *
   * @param message the message
   * @param context this activation: the entity's id, its fencing token, the reply of an ask
   * @throws Exception to fail the message and restart the entity
   */
  void onMessage(M message, EntityContext context) throws Exception;
}
