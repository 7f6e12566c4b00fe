package io.atoll.runtime.codec;

/**
 * Turns the messages of one entity type, and the answers to its asks, into bytes and back, for
 * delivery to another pod. Local deliveries never use it.
 *
 * <p>Every pod of a cluster must decode what any other pod encodes, also across versions during
 * a rolling update. Implementations are thread-safe; {@link #decode} treats its input as untrusted:
 * it instantiates only the types it was set up for, bounds what it allocates, and reports garbage
 * with {@link IllegalArgumentException} rather than any other failure.
 */
public interface MessageCodec {

  /**
   * Encodes a message or an answer.
   *
   * @throws IllegalArgumentException if the value is of a type this codec cannot encode; the
   *     message names the type
   */
  byte[] encode(Object value);

  /**
   * Decodes bytes made by {@link #encode} on any pod.
   *
   * @throws IllegalArgumentException if the bytes are not a valid encoding, saying why
   */
  Object decode(byte[] bytes);
}
