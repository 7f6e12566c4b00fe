package io.atoll.runtime.internal.codec;

import io.atoll.runtime.Reply;
import io.atoll.runtime.codec.MessageCodec;

/**
 * The reply handle a message being decoded on this thread should hold. A codec that meets a
 * {@link Reply} in an encoded message (written as a placeholder by the sender) takes this one: the
 * handle that answers on the stream the message came by.
 */
public final class ReplyBinding {

  private static final ThreadLocal<Reply<Object>> CURRENT = new ThreadLocal<>();

  private ReplyBinding() {}

  /**
   * Decodes {@code bytes} with {@code codec}; reply handles inside become {@code reply}.
   *
   * @throws RuntimeException whatever the codec throws for bytes it cannot decode
   */
  public static Object decode(MessageCodec codec, byte[] bytes, Reply<Object> reply) {
    CURRENT.set(reply);
    try {
      return codec.decode(bytes);
    } finally {
      CURRENT.remove();
    }
  }

  /** The handle for the message being decoded, or one that answers nobody. */
  public static Reply<Object> current() {
    Reply<Object> r = CURRENT.get();
    return r == null ? NoReply.INSTANCE : r;
  }
}
