package io.atoll.runtime.internal.host;

/**
 * What the messages a shared drain handled in one turn still owe their senders' bookkeeping (the
 * in-flight count, the deadlines, the shard route's count of unresolved messages): done once for
 * the turn, not once per message, because those are the lines the senders write too. The drain
 * calls {@link #flush} before its turn ends, before a stop marker, and whenever a delivery of
 * another sender or shard starts a batch of its own.
 */
public interface Deferred {

  /** Does the bookkeeping deferred so far. */
  void flush();
}
