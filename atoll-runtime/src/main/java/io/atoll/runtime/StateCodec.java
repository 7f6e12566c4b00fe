package io.atoll.runtime;

import io.atoll.runtime.codec.MessageCodec;
import java.util.Objects;

/**
 * Turns a durable entity's state into bytes for its store and back. Thread-safe.
 *
 * @param <S> the type of the state
 */
public interface StateCodec<S> {

  /** The bytes of {@code state}. */
  byte[] encode(S state);

  /**
   * The state in {@code bytes}, made by {@link #encode} of this or an earlier version of the state
   * class.
   *
   * @throws IllegalArgumentException if the bytes are not a valid encoding
   */
  S decode(byte[] bytes);

  /**
   * The default codec: Apache Fory limited to {@code stateClass} and what it is made of (its record
   * components, the permitted subclasses of a sealed type), as {@link EntityType} carries messages.
   * Fields are written with their names (Fory's compatible mode), so the state class may change
   * between releases: a field added is read as its default (null, 0, false) from bytes written
   * before it existed; a field removed is skipped; a field whose type changed is not readable
   * (give it a new name). Building one takes milliseconds: keep it.
   */
  static <S> StateCodec<S> of(Class<S> stateClass) {
    Objects.requireNonNull(stateClass, "stateClass");
    // The codec that would carry the state class as a type's messages: the same classes, the same limits.
    MessageCodec c = DefaultCodec.forType(EntityType.of("state", stateClass));
    return new StateCodec<>() {
      @Override
      public byte[] encode(S state) {
        return c.encode(state);
      }

      @Override
      public S decode(byte[] bytes) {
        Object o = c.decode(bytes);
        if (!stateClass.isInstance(o)) {
          throw new IllegalArgumentException("state codec of " + stateClass.getName() + ": the bytes hold a "
              + o.getClass().getName() + " (expected: a " + stateClass.getName() + ")");
        }
        return stateClass.cast(o);
      }
    };
  }
}
