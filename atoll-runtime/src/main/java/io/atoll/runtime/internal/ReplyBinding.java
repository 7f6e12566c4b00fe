package io.atoll.runtime.internal;

import io.atoll.runtime.Reply;

/**
 * The reply handle a message being decoded on this thread should hold. A codec that meets a
 * {@link Reply} in an encoded message (written as a placeholder by the sender) takes this one: the
 * handle that answers on the stream the message came by.
 */
public final class ReplyBinding {

  private static final ThreadLocal<Reply<Object>> CURRENT = new ThreadLocal<>();

  private ReplyBinding() {}

  static void bind(Reply<Object> r) {
    CURRENT.set(r);
  }

  static void unbind() {
    CURRENT.remove();
  }

  /** The handle for the message being decoded, or one that answers nobody. */
  public static Reply<Object> current() {
    Reply<Object> r = CURRENT.get();
    return r == null ? NoReply.INSTANCE : r;
  }
}
