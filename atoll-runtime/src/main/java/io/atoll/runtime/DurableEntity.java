package io.atoll.runtime;

/**
 * The behaviour of a durable entity: an entity whose state {@code S} Atoll keeps in a
 * {@link io.atoll.core.spi.StateStore} for it. Register it with {@link Durable#entity}.
 *
 * <p>Before an activation's first message, its state is read from the store under the
 * activation's fencing token (a claim: from then on no older activation of the entity can write),
 * and the pod's lease is checked after that read. After a planned move the new owner's first
 * activation starts instead from the state the old owner carried in the hand-off, without a read;
 * the old owner's activations have all ended by then, and its first save raises the stored token. The handler reads {@link DurableContext#state()}
 * and replaces it with {@link DurableContext#setState}; a state that was set is saved when the
 * handler returns, before the message counts as handled, or earlier with
 * {@link DurableContext#persist()}. Each save is conditional on the activation's token and on the
 * revision it last read or wrote, so a stale activation (cut off, fenced, moved) never writes and
 * no state goes backwards.
 *
 * <p>So a handled message's change is saved. A handler that answers an ask should
 * {@link DurableContext#persist()} before it answers: an answer sent first may announce a change
 * that a failing save then loses. A save that fails (the store down, a newer activation elsewhere)
 * fails the message with {@link DeliveryException.Reason#ENTITY_FAILED}, naming why, and ends the
 * activation: the next message starts a new one, which reads the store again. A save whose answer
 * was lost may have been written: the new activation reads whatever was.
 *
 * @param <M> the type of messages it handles
 * @param <S> the type of its state: a value (a record), replaced rather than changed in place
 */
@FunctionalInterface
public interface DurableEntity<M, S> {

  /**
   * Handles one message.
   *
   * @param message the message
   * @param context this activation, with its state
   * @throws Exception to fail the message and restart the entity from its stored state
   */
  void onMessage(M message, DurableContext<S> context) throws Exception;
}
