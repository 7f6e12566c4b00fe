package io.atoll.runtime.internal.codec;

import io.atoll.runtime.Reply;

/** The reply handle of a tell, or of a handle carried to another pod: answers nobody. */
public final class NoReply implements Reply<Object> {

  public static final NoReply INSTANCE = new NoReply();

  private NoReply() {}

  @Override
  public void send(Object value) {}

  @Override
  public void fail(String message) {}
}
