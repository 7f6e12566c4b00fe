package io.atoll.runtime.internal.util;

import io.atoll.core.Ticker;
import io.atoll.runtime.PodSettings;
import java.util.Objects;

/**
 * What every room of a pod may use: its settings, its clock and its scheduler. Immutable.
 *
 * @param settings the pod's validated settings
 * @param ticker the clock every deadline, lease and back-off reads
 * @param scheduler runs delayed retries and checks
 */
public record PodContext(PodSettings settings, Ticker ticker, Scheduler scheduler) {

  /** Checks that nothing is null. */
  public PodContext {
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(ticker, "ticker");
    Objects.requireNonNull(scheduler, "scheduler");
  }
}
