package io.atoll.runtime;

import io.atoll.core.spi.StateStoreException;

/**
 * One activation of a durable entity, as its behaviour sees it: the {@link EntityContext} and the
 * entity's state. Use it only from the entity's own handler.
 *
 * @param <S> the type of the state
 */
public interface DurableContext<S> extends EntityContext {

  /** The state: as read from the store when the activation started, or as last set. */
  S state();

  /**
   * Replaces the state. It is saved by {@link #persist()}, or when the handler returns.
   *
   * @throws NullPointerException if {@code state} is null
   */
  void setState(S state);

  /**
   * Saves the state set since the last save, now; does nothing if none was set. Call it before
   * answering an ask or telling another entity about the change.
   *
   * @throws StateStoreException if the store refused the save ({@code FENCED}: a newer activation
   *     of the entity exists; {@code CONFLICT}) or could not be reached ({@code UNAVAILABLE}); the
   *     activation then ends after this message, whatever the handler does with the exception
   * @throws IllegalArgumentException if the encoded state is larger than the store takes
   */
  void persist() throws StateStoreException;

  /** How many times the state was saved, this save included; 0 if never. */
  long revision();
}
