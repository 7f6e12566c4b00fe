package io.atoll.runtime;

import io.atoll.core.spi.StateStore;
import java.util.Objects;

/**
 * Registers durable entities: an {@link EntityFactory} whose activations keep their state in a
 * {@link StateStore} (see {@link DurableEntity}).
 *
 * <pre>{@code
 * record Balance(long cents) {}
 *
 * Sharding.builder()...
 *     .register(ACCOUNT, Durable.entity(store, Balance.class, new Balance(0), (msg, ctx) -> {
 *       switch (msg) {
 *         case Deposit d -> {
 *           ctx.setState(new Balance(ctx.state().cents() + d.cents()));
 *           ctx.persist();
 *           d.reply().send(ctx.state().cents());
 *         }
 *       }
 *     }))
 * }</pre>
 */
public final class Durable {

  private Durable() {}

  /**
   * Entities of state {@code S} kept in {@code store}, encoded by the default codec
   * ({@link StateCodec#of}).
   *
   * @param initial the state of an entity that was never saved
   */
  public static <M, S> EntityFactory<M> entity(StateStore store, Class<S> stateClass, S initial,
      DurableEntity<M, S> behaviour) {
    return entity(store, StateCodec.of(stateClass), initial, behaviour);
  }

  /** Entities of state {@code S} kept in {@code store}, encoded by {@code codec}. */
  public static <M, S> EntityFactory<M> entity(StateStore store, StateCodec<S> codec, S initial,
      DurableEntity<M, S> behaviour) {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(initial, "initial");
    Objects.requireNonNull(behaviour, "behaviour");
    return ctx -> DurableActivation.start(ctx, store, codec, initial, behaviour);
  }
}
