package io.atoll.core.spi;

import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The delivery half of {@link AssignmentStore#watch}, shared by the stores: each {@link #check}
 * reads the state and hands it to the listener if its version is newer than the last delivered,
 * so states arrive in strictly increasing version order, one at a time, and never after
 * {@link #close} returns. A store decides when to check: on a timer of its own ({@link #pollEvery})
 * plus {@link #wake} on a change notice, or from a shared scheduler.
 */
public final class VersionWatch extends StoreWatch<VersionWatch> {

  /** Reads the stored state, or may answer empty when it knows nothing is newer than {@code version}. */
  @FunctionalInterface
  public interface Source {
    /** The stored state; may be empty if none is newer than {@code version}. */
    Optional<AssignmentStore.Stored> read(long version) throws Exception;
  }

  private final Consumer<AssignmentStore.Stored> onChange;
  private final Source source;
  private final Consumer<Exception> onError;
  private long last; // guarded by the delivery lock

  /**
   * A watch that delivers states newer than {@code afterVersion}.
   *
   * @param storeClosed whether the store was closed (no check reads it then)
   * @param onError told of a failed read; the next check tries again
   */
  public VersionWatch(long afterVersion, Consumer<AssignmentStore.Stored> onChange, Source source,
      BooleanSupplier storeClosed, Consumer<Exception> onError) {
    super(storeClosed);
    this.last = afterVersion;
    this.onChange = onChange;
    this.source = source;
    this.onError = onError;
  }

  @Override
  VersionWatch self() {
    return this;
  }

  /** Reads the state and delivers it if it is newer than the last delivered. */
  @Override
  void poll() {
    tell(() -> {
      try {
        Optional<AssignmentStore.Stored> s = source.read(last);
        if (s.isPresent() && s.get().version() > last) {
          last = s.get().version();
          onChange.accept(s.get());
        }
      } catch (Exception e) {
        onError.accept(e);
      }
    });
  }
}
