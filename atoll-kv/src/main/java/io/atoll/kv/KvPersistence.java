package io.atoll.kv;

import java.util.Locale;
import java.util.Objects;

/**
 * What a node keeps on disk, in Redis' words: an append-only file ({@code appendonly}) in the data
 * directory's {@code appendonlydir}, written before every reply that follows a write and synced to
 * disk as {@code appendfsync} says.
 *
 * @param appendOnly whether writes are logged and replayed at start
 * @param fsync when the log reaches the disk
 */
public record KvPersistence(boolean appendOnly, Fsync fsync) {

  /** Nothing is kept: a restarted node comes back empty. */
  public static final KvPersistence OFF = new KvPersistence(false, Fsync.EVERYSEC);

  /** Redis' {@code appendonly yes}, {@code appendfsync everysec}. */
  public static final KvPersistence EVERYSEC = new KvPersistence(true, Fsync.EVERYSEC);

  /** Redis' {@code appendfsync} policies and their promises. */
  public enum Fsync {
    /**
     * A reply leaves only after its write is on disk: one fsync for every write of an event-loop
     * turn, across connections and pipelines. A crash of the machine loses nothing acknowledged.
     */
    ALWAYS,
    /**
     * A reply leaves after its write reached the operating system (nothing is lost when the process
     * dies); the file is synced once a second, so a crash of the machine loses at most about a
     * second.
     */
    EVERYSEC,
    /** As {@link #EVERYSEC}, but the operating system decides when to sync. */
    NO;

    /** Redis' name: always, everysec or no. */
    public String redisName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The policy named {@code s} (always, everysec or no, any case).
     *
     * @throws IllegalArgumentException naming the value and the expected ones
     */
    public static Fsync parse(String s) {
      for (Fsync f : values()) {
        if (f.redisName().equalsIgnoreCase(s)) {
          return f;
        }
      }
      throw new IllegalArgumentException("appendfsync: '" + s + "' (expected: always, everysec or no)");
    }
  }

  /** Checks the fields. */
  public KvPersistence {
    Objects.requireNonNull(fsync, "fsync");
  }
}
