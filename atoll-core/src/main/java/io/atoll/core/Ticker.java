package io.atoll.core;

/**
 * A monotonic source of nanoseconds, injected wherever leases, timeouts and intervals are
 * measured, so that tests can move time instead of sleeping. Thread-safe.
 */
@FunctionalInterface
public interface Ticker {

  /** The system's monotonic clock, {@link System#nanoTime()}. */
  Ticker SYSTEM = System::nanoTime;

  /** Nanoseconds since an arbitrary origin; only differences are meaningful. */
  long nanoTime();
}
