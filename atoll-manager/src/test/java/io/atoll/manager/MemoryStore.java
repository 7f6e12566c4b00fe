package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StaleTermException;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * An {@link AssignmentStore} in memory, with failures on demand. Single-threaded use. There is no
 * clock here: a lease lapses the moment another holder asks for one (as if its time had run out,
 * the way a crashed manager's does), so every new manager takes over under the next term.
 */
final class MemoryStore implements AssignmentStore {

  /** How the next saves fail. */
  enum Failure {
    /** The save throws and writes nothing. */
    BEFORE_WRITE,
    /** The save writes, then throws: the outcome looks ambiguous to the caller. */
    AFTER_WRITE,
    /**
     * The save throws at once and is applied later, at {@link #applyLateSaves()}: a command that
     * timed out at its client while the server was stopped, run when the server resumes.
     */
    LATER
  }

  private final List<Runnable> late = new ArrayList<>();

  private byte[] data;
  private long version;
  private long dataTerm;
  private long grantedTerm;
  private Lease held;
  private final List<Consumer<Stored>> watchers = new ArrayList<>();
  private int failingSaves;
  private Failure failure = Failure.BEFORE_WRITE;
  private int failingLoads;
  int saves;

  @Override
  public Optional<Stored> load() {
    if (failingLoads > 0) {
      failingLoads--;
      throw new StoreException("memory store: load failed (injected)");
    }
    return data == null ? Optional.empty() : Optional.of(new Stored(version, dataTerm, data.clone()));
  }

  @Override
  public long save(byte[] bytes, long term, long expectedVersion) {
    if (failingSaves > 0 && failure == Failure.LATER) {
      failingSaves--;
      byte[] copy = bytes.clone();
      late.add(() -> save(copy, term, expectedVersion));
      throw new StoreException("memory store: save timed out (injected; applied later)");
    }
    if (failingSaves > 0 && failure == Failure.BEFORE_WRITE) {
      failingSaves--;
      throw new StoreException("memory store: save failed (injected)");
    }
    if (term < grantedTerm) {
      throw new StaleTermException("memory store", term, grantedTerm);
    }
    if (term > grantedTerm) {
      throw new StoreException("memory store: term " + term + " was never granted");
    }
    if (expectedVersion != version) {
      throw new StoreConflictException("memory store", expectedVersion, version);
    }
    data = bytes.clone();
    version++;
    dataTerm = term;
    saves++;
    Stored s = new Stored(version, term, data.clone());
    watchers.forEach(w -> w.accept(s));
    if (failingSaves > 0) {
      failingSaves--;
      throw new StoreException("memory store: save failed after writing (injected)");
    }
    return version;
  }

  /** The next {@code n} saves fail as {@code how}. */
  void failSaves(int n, Failure how) {
    failingSaves = n;
    failure = how;
  }

  /** Applies the saves that failed as {@link Failure#LATER}, in order (each may fail as usual). */
  void applyLateSaves() {
    List<Runnable> now = List.copyOf(late);
    late.clear();
    for (Runnable r : now) {
      try {
        r.run();
      } catch (StoreException e) {
        // refused as any save would be
      }
    }
  }

  /** The next {@code n} loads fail. */
  void failLoads(int n) {
    failingLoads = n;
  }

  /** Heals: no more injected failures. */
  void heal() {
    failingSaves = 0;
    failingLoads = 0;
  }

  long version() {
    return version;
  }

  @Override
  public Watch watch(long afterVersion, Consumer<Stored> onChange) {
    if (data != null && version > afterVersion) {
      onChange.accept(new Stored(version, dataTerm, data.clone()));
    }
    watchers.add(onChange);
    return () -> watchers.remove(onChange);
  }

  @Override
  public Optional<Lease> tryAcquire(String holder, Duration ttl) {
    AssignmentStore.checkLeaseArguments(holder, ttl);
    held = new Lease(holder, ++grantedTerm, ttl);
    return Optional.of(held);
  }

  @Override
  public boolean renew(Lease lease) {
    if (held == null && lease.term() == grantedTerm) {
      held = lease;
    }
    return lease.equals(held);
  }

  @Override
  public void release(Lease lease) {
    if (lease.equals(held)) {
      held = null;
    }
  }

  @Override
  public Optional<Leader> leader() {
    return Optional.ofNullable(held).map(l -> new Leader(l.holder(), l.term()));
  }

  /** Another manager takes the leadership: the current lease is lost, a new term granted. */
  long takeOver() {
    held = new Lease("another manager", ++grantedTerm, Duration.ofSeconds(10));
    return grantedTerm;
  }

  /** Another writer saves {@code bytes} (a newer manager). */
  /** Loses the state, as a store restarted without its data; the term stays granted. */
  void wipe() {
    data = null;
    version = 0;
  }

  void overwrite(byte[] bytes) {
    data = bytes.clone();
    version++;
  }

  @Override
  public void close() {
    // shared by every manager of a simulation: a closing manager gives up its lease
    held = null;
  }
}
