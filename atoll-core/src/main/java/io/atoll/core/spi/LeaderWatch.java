package io.atoll.core.spi;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The delivery half of {@link AssignmentStore#watchLeader}, shared by the stores: each
 * {@link #check} reads the leader and tells the listener if the answer differs from the last one
 * told, so equal answers are told once and calls come one at a time, never after {@link #close}
 * returns. The read runs outside the delivery lock: {@link #close} does not wait for a store read
 * under way (up to a call's timeout while the store is away), only for a listener call. A store
 * decides when to check: on its own timer ({@link #pollEvery}) plus {@link #wake} when it is told
 * of a change.
 */
public final class LeaderWatch extends StoreWatch<LeaderWatch> {

  /** The shortest poll period accepted. */
  static final Duration MIN_POLL = Duration.ofMillis(1);
  /** The longest poll period accepted. */
  static final Duration MAX_POLL = Duration.ofMinutes(1);

  private final Supplier<Optional<AssignmentStore.Leader>> source;
  private final AssignmentStore.LeaderListener listener;
  private final Consumer<RuntimeException> onError;
  private Optional<AssignmentStore.Leader> last; // guarded by the delivery lock; null: nothing told yet
  private boolean unreachable; // guarded by the delivery lock

  /**
   * A watch that reads the leader from {@code source}.
   *
   * @param source the store's {@link AssignmentStore#leader()}; a {@link StoreException} from it
   *     means the store cannot be reached
   * @param storeClosed whether the store was closed (no check reads it then)
   * @param onError told of every failed read, e.g. to log it; the next check tries again
   */
  public LeaderWatch(Supplier<Optional<AssignmentStore.Leader>> source, AssignmentStore.LeaderListener listener,
      BooleanSupplier storeClosed, Consumer<RuntimeException> onError) {
    super(storeClosed);
    this.source = source;
    this.listener = listener;
    this.onError = onError;
  }

  /**
   * Checks now and then every {@code period} on a daemon thread of its own named {@code name}.
   *
   * @throws IllegalArgumentException if {@code period} is not within 1 ms .. 1 min
   */
  @Override
  public LeaderWatch pollEvery(Duration period, String name) {
    checkPoll(period);
    return super.pollEvery(period, name);
  }

  /**
   * Checks a poll period given to {@link AssignmentStore#watchLeader}.
   *
   * @throws IllegalArgumentException naming the period and the range expected
   */
  public static void checkPoll(Duration period) {
    if (period == null || period.compareTo(MIN_POLL) < 0 || period.compareTo(MAX_POLL) > 0) {
      throw new IllegalArgumentException("leader poll: " + period + " (expected: 1 ms..1 min)");
    }
  }

  @Override
  LeaderWatch self() {
    return this;
  }

  /** Reads the leader and tells the listener if it changed (or that the store cannot be reached). */
  @Override
  void poll() {
    Optional<AssignmentStore.Leader> read;
    RuntimeException failed = null;
    try {
      read = source.get();
    } catch (RuntimeException e) {
      read = null;
      failed = e;
    }
    Optional<AssignmentStore.Leader> now = read;
    RuntimeException e = failed;
    tell(() -> {
      try {
        if (e != null) {
          onError.accept(e);
          if (!unreachable) {
            unreachable = true;
            last = null; // tell the leader again once the store answers
            listener.unreachable(e instanceof StoreException s ? s : new StoreException(String.valueOf(e), e));
          }
          return;
        }
        unreachable = false;
        if (!now.equals(last)) {
          last = now;
          listener.leader(now);
        }
      } catch (RuntimeException thrown) {
        onError.accept(thrown); // the listener threw: the watch goes on
      }
    });
  }
}
