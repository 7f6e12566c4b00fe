package io.atoll.runtime.internal;

import io.atoll.core.PodId;
import io.atoll.runtime.internal.cluster.ManagerLink;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a pod declared gone joins again as a new incarnation: its retry policy, apart from the
 * fencing {@link PodRuntime} does first, and the gate that lets one rejoin run at a time. While a
 * rejoin waits, the lease renewals of the new, not yet registered incarnation are answered "unknown
 * pod", and each such answer asks for a rejoin again: without the gate every one would fence and
 * start another rejoin thread. After a refusal of the pod's entity type declarations the gate stays
 * shut for good (the pod is fenced, hosts nothing, and is out of the cluster until stopped).
 */
final class Rejoin {

  private static final Logger log = LoggerFactory.getLogger(PodRuntime.class);

  private final java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean();
  private volatile boolean outForGood;

  /**
   * Whether a new rejoin may begin now: none is under way and the pod was never refused for good.
   * A caller given {@code true} must call {@link #run} once.
   */
  boolean begin() {
    return !outForGood && running.compareAndSet(false, true);
  }

  /** Gives back a {@link #begin} that will not run (the pod began closing meanwhile). */
  void cancel() {
    running.set(false);
  }

  /** Whether the manager refused this pod's entity type declarations on a rejoin. */
  boolean outForGood() {
    return outForGood;
  }

  /**
   * Runs the rejoin {@link #begin} allowed; after a refusal for good calls {@code refusedForGood}
   * (which stops the lease renewals) and keeps the gate shut.
   *
   * @return whether the pod joined
   */
  boolean run(Runnable register, java.util.function.BooleanSupplier closing, PodId self, Runnable refusedForGood) {
    try {
      boolean joined = joinAgain(register, closing, self);
      if (!joined && !closing.getAsBoolean()) {
        outForGood = true;
        refusedForGood.run();
      }
      return joined;
    } finally {
      running.set(false);
    }
  }

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
    return joinAgain(register, closing, self, java.util.concurrent.locks.LockSupport::parkNanos);
  }

  /** The same, pausing with {@code pauseNanos} (a parked thread in production; a test's record). */
  static boolean joinAgain(Runnable register, java.util.function.BooleanSupplier closing, PodId self,
      java.util.function.LongConsumer pauseNanos) {
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
        pauseNanos.accept(pause); // retry pacing, not synchronization
        pause = Math.min(LAST_PAUSE_NANOS, pause * 2);
      }
    }
    return false;
  }
}
