package io.atoll.manager;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StoreConflictException;
import io.atoll.core.spi.StoreException;
import java.util.Optional;

/** An {@link AssignmentStore} in memory, with failures on demand. Single-threaded use. */
final class MemoryStore implements AssignmentStore {

  /** How the next saves fail. */
  enum Failure {
    /** The save throws and writes nothing. */
    BEFORE_WRITE,
    /** The save writes, then throws: the outcome looks ambiguous to the caller. */
    AFTER_WRITE
  }

  private byte[] data;
  private long version;
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
    return data == null ? Optional.empty() : Optional.of(new Stored(version, data.clone()));
  }

  @Override
  public long save(byte[] bytes, long expectedVersion) {
    if (failingSaves > 0 && failure == Failure.BEFORE_WRITE) {
      failingSaves--;
      throw new StoreException("memory store: save failed (injected)");
    }
    if (expectedVersion != version) {
      throw new StoreConflictException("memory store", expectedVersion, version);
    }
    data = bytes.clone();
    version++;
    saves++;
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

  /** Another writer saves {@code bytes} (a newer manager). */
  void overwrite(byte[] bytes) {
    data = bytes.clone();
    version++;
  }

  @Override
  public void close() {
    // shared by every manager of a simulation; nothing to release
  }
}
