package io.atoll.core.spi;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where the shard managers keep their state and elect their leader: one versioned blob written
 * under a term, replaced whole and atomically; an ordered watch of its changes; and a leadership
 * lease whose every grant carries a new, greater term.
 *
 * <p>The store does not interpret the bytes. Its guarantees, checked by the store contract test
 * for every implementation:
 *
 * <ul>
 *   <li>{@link #load()} returns exactly the bytes of the last successful {@link #save}, with its
 *       version and term, or empty when nothing was ever saved — never a mix of two saves;
 *   <li>a save succeeds only if the stored version is the expected one (compare-and-set) <em>and
 *       </em> its term is the last one granted: a writer whose leadership another one has taken
 *       since is refused with {@link StaleTermException}, whether or not it noticed;
 *   <li>at most one holder has a live lease at a time; a lease that is not renewed within its
 *       time to live lapses, and the next grant carries a greater term;
 *   <li>a watch delivers states in strictly increasing version order, one at a time, and
 *       eventually the latest one (intermediate states may be skipped when they follow each other
 *       quickly); it goes on across a restart of the store's server;
 *   <li>a leader watch ({@link #watchLeader}) tells every change of the leadership, ending with
 *       the current one;
 *   <li>a save that returned has reached the store's durable storage (as durable as the server is
 *       configured to be, for a server-backed store).
 * </ul>
 *
 * <p>Implementations are thread-safe, and a store's client reconnects by itself after its server
 * restarts: a call made while the server is away fails with {@link StoreException}, and a later
 * one succeeds. Versions start at 0 (nothing stored) and grow by one per successful save. Terms
 * start at 0 (never granted); a save under term 0 is allowed only while no lease was ever granted.
 */
public interface AssignmentStore extends AutoCloseable {

  /** The largest state a store must accept unless it says less in {@link #maxBytes()}: 64 MiB. */
  int MAX_BYTES = 64 << 20;

  /** The longest holder name: 255 characters. */
  int MAX_HOLDER = 255;

  /**
   * Reads the current state.
   *
   * @return the state, or empty when nothing was ever saved
   * @throws StoreException if the store cannot be read or holds unreadable data
   */
  Optional<Stored> load();

  /**
   * Replaces the state if the stored version is {@code expectedVersion} and {@code term} is the
   * last term granted.
   *
   * @param data the new state, at most {@link #maxBytes()} bytes
   * @param term the writer's term, from its {@link Lease} (0 while no lease was ever granted)
   * @param expectedVersion the version this writer last loaded or saved (0 if none)
   * @return the new version, {@code expectedVersion + 1}
   * @throws StaleTermException if a later term was granted: the writer was deposed
   * @throws StoreConflictException if another writer saved since {@code expectedVersion}
   * @throws StoreException if {@code term} was never granted, or the write failed; the stored
   *     state is then unchanged or, if the failure was ambiguous, is one of the old and the new
   * @throws IllegalArgumentException if {@code data} is larger than {@link #maxBytes()}
   */
  long save(byte[] data, long term, long expectedVersion);

  /**
   * Watches the state: {@code onChange} is called with each newer state, in strictly increasing
   * version order, starting with the current one if its version is above {@code afterVersion}.
   * Calls come one at a time from a thread of the store's; a listener that throws is logged by
   * the store and the watch goes on. Connection failures are retried until the watch is closed.
   *
   * @param afterVersion the version the caller already has (0 for none)
   * @return closes the watch; after {@code close} returns, no more calls are made
   */
  Watch watch(long afterVersion, Consumer<Stored> onChange);

  /**
   * Takes the leadership if nobody holds a live lease, under a new term greater than every term
   * granted before.
   *
   * @param holder who leads, e.g. the manager's address; 1 to {@link #MAX_HOLDER} characters,
   *     no line breaks
   * @param ttl how long the lease lives without a renewal (a store may round it up to its own
   *     granularity, see its documentation)
   * @return the lease, or empty if another holder's lease is live
   * @throws StoreException if the store cannot be reached
   * @throws IllegalArgumentException if {@code holder} or {@code ttl} is malformed
   */
  Optional<Lease> tryAcquire(String holder, Duration ttl);

  /**
   * Extends a lease by its time to live. A lease that lapsed is taken again under the same term
   * if no other lease was granted since (no one else can have written).
   *
   * @return true if the lease is live again; false if it is lost (another term was granted):
   *     the holder must stop writing (its saves are refused anyway) and step down
   * @throws StoreException if the store cannot be reached; the lease may still be live
   */
  boolean renew(Lease lease);

  /** Gives up a lease if it is still held, so that another holder can take over at once. */
  void release(Lease lease);

  /**
   * The holder of the live lease, if any.
   *
   * @throws StoreException if the store cannot be reached
   */
  Optional<Leader> leader();

  /**
   * Follows the leadership: {@code listener} hears the leader now (or that none leads) at once,
   * then each change — a new holder or term, or none once the lease lapses or is released — one
   * call at a time, from a thread of the store's, until the watch is closed. Consecutive equal
   * answers are told once; a store that cannot be reached is told through
   * {@link LeaderListener#unreachable} (once per outage) and the watch goes on.
   *
   * <p>A store that is told of changes (etcd's watch, Redis' key tracking, the OS releasing a file
   * lock) implements this natively and reads the leader at most every {@code poll} as a backstop;
   * this default reads {@link #leader()} every {@code poll}, so any store works, only slower.
   *
   * @param poll how often to read the leader when no change notice comes (1 ms .. 1 min)
   * @return closes the watch; after {@code close} returns, no more calls are made
   * @throws IllegalArgumentException if {@code poll} is out of range
   */
  default Watch watchLeader(Duration poll, LeaderListener listener) {
    return new LeaderWatch(this::leader, listener, () -> false, e -> { }).pollEvery(poll, "atoll-store-leader-poll");
  }

  /** What {@link #watchLeader} tells: the leader, or that the store cannot be reached. */
  interface LeaderListener {
    /** Who leads now; empty when no live lease is held (a standby may take over). */
    void leader(Optional<Leader> leader);

    /** The store cannot be reached; the watch goes on and tells the leader once it can. */
    default void unreachable(StoreException e) {}
  }

  /**
   * The largest state this store accepts; {@link #MAX_BYTES} unless its server limits requests
   * (etcd's {@code --max-request-bytes}).
   */
  default int maxBytes() {
    return MAX_BYTES;
  }

  /** Releases the store's resources (its lease, watches, files, connections). */
  @Override
  void close();

  /**
   * A stored state.
   *
   * @param version the version of this state, at least 1
   * @param term the term of its writer
   * @param data the bytes saved
   */
  record Stored(long version, long term, byte[] data) {}

  /**
   * A granted leadership lease.
   *
   * @param holder who holds it
   * @param term its term, greater than every term granted before it
   * @param ttl how long it lives without a renewal, as the store granted it
   */
  record Lease(String holder, long term, Duration ttl) {}

  /**
   * Who leads.
   *
   * @param holder the holder named when the lease was taken
   * @param term its term
   */
  record Leader(String holder, long term) {}

  /** An open watch. */
  interface Watch extends AutoCloseable {
    /** Stops the watch; idempotent. */
    @Override
    void close();
  }

  /**
   * Checks a holder name and a lease time to live, for implementations.
   *
   * @throws IllegalArgumentException naming what is wrong and the expected form
   */
  static void checkLeaseArguments(String holder, Duration ttl) {
    if (holder == null || holder.isEmpty() || holder.length() > MAX_HOLDER) {
      throw new IllegalArgumentException("lease holder: " + (holder == null ? "null" : "'" + holder + "'")
          + " (expected: 1.." + MAX_HOLDER + " characters)");
    }
    if (holder.indexOf('\n') >= 0 || holder.indexOf('\r') >= 0) {
      throw new IllegalArgumentException("lease holder: contains a line break (expected: one line)");
    }
    if (ttl == null || ttl.toMillis() < 1 || ttl.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("lease ttl: " + ttl + " (expected: 1 ms..1 day)");
    }
  }
}
