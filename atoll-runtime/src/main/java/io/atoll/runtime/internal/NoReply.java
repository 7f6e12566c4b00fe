package io.atoll.runtime.internal;

import io.atoll.runtime.Reply;

/** The reply handle of a tell, or of a handle carried to another pod: answers nobody. */
final class NoReply implements Reply<Object> {

  static final NoReply INSTANCE = new NoReply();

  private NoReply() {}

  @Override
  public void send(Object value) {}

  @Override
  public void fail(String message) {}
}
