package io.atoll.kv;

/**
 * Hears every command a node executes: for metrics. Called on the client event loops for each
 * command; implementations must be thread-safe, must not allocate, block or throw.
 */
public interface KvObserver {

  /** Hears nothing (and costs no clock reads). */
  KvObserver NONE = new KvObserver() {};

  /** A command ran for {@code nanos}; {@code error} if it answered an error (including redirects). */
  default void command(boolean error, long nanos) {}
}
