package io.atoll.runtime.internal;

import io.atoll.core.PodId;
import io.atoll.runtime.internal.cluster.ManagerLink;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a pod declared gone joins again as a new incarnation: its retry policy, apart from the
 * fencing {@link PodRuntime} does first. Stateless.
 */
final class Rejoin {

  private static final Logger log = LoggerFactory.getLogger(PodRuntime.class);

  private Rejoin() {}

  /** The pause before the rejoin retries after a failure, doubling from the first to the last. */
  static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  static final long LAST_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(5);

  /**
   * Registers again until it succeeds or {@code closing}, pausing between failures; gives up for
   * good if the manager refuses the pod's entity type declarations: a pod declared gone while pods
   * with another hasher took its types would otherwise be refused, and retry, forever.
   *
   * @return whether the pod joined
   */
  static boolean joinAgain(Runnable register, java.util.function.BooleanSupplier closing, PodId self) {
    long pause = FIRST_PAUSE_NANOS;
    while (!closing.getAsBoolean()) {
      try {
        register.run();
        return true;
      } catch (ManagerLink.TypesRefused e) {
        log.error("pod {}: cannot join again, and stays out of the cluster hosting no shard until it is stopped: {}"
            + " (expected: its entity types declared as the live pods declare them; stop this pod)", self,
            e.getMessage());
        return false;
      } catch (RuntimeException e) {
        log.warn("pod {}: could not join again yet: {}; retrying in {} ms", self, e.getMessage(),
            TimeUnit.NANOSECONDS.toMillis(pause));
        java.util.concurrent.locks.LockSupport.parkNanos(pause); // retry pacing, not synchronization
        pause = Math.min(LAST_PAUSE_NANOS, pause * 2);
      }
    }
    return false;
  }
}
