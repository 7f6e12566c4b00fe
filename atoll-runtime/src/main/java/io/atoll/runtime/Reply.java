package io.atoll.runtime;

/**
 * Where the answer to an ask goes. An ask puts one in its message
 * ({@code ref.ask(Get::new)} with {@code record Get(Reply<Long> reply)}); the entity answers with
 * {@link #send}, during its handler or later, from any thread of the pod that received the ask.
 *
 * <p>Only the first answer counts; later ones are ignored. A reply handle belongs to the pod that
 * received the ask: put into a message for an entity on another pod, it arrives there as a
 * handle that answers nobody.
 *
 * @param <R> the type of the answer
 */
public interface Reply<R> {

  /** Answers the ask with {@code value}. */
  void send(R value);

  /** Fails the ask: its sender gets a {@link DeliveryException} with {@code message}. */
  void fail(String message);
}
