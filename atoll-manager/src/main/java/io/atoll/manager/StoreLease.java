package io.atoll.manager;

import io.atoll.core.Ticker;
import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.StaleTermException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's leadership lease in the store, once {@link Journal#recover} took it: its renewals,
 * and whether it is surely still live.
 *
 * <p><b>Leading only while the store lease is surely live.</b> It remembers when it sent the last
 * store-lease request that succeeded (the acquire, or a renewal); the lease cannot have lapsed in
 * the store before that send time plus the lease's time to live, by any clock within the drift
 * bound. {@link #leads(long)} is true only until then: past it, a standby may have taken over, so
 * no pod lease may be granted or renewed ({@link Membership} asks before each). A failed renewal
 * is retried with back-off (the store may be restarting); a renewal that succeeds again under the
 * same term resumes the grants; one that finds another term reports {@code onLost} once. After a
 * pause of the manager itself ({@link #stalled}), nothing is granted until a renewal sent after the
 * pause succeeded.
 *
 * <p>Loop-confined; renewals run on the {@code io} executor and come back to the loop.
 */
@GuardedBy("loop")
final class StoreLease {

  private static final Logger log = LoggerFactory.getLogger(StoreLease.class);

  private final AssignmentStore store;
  private final Executor io;
  private final Loop loop;
  private final Ticker ticker;
  private final Consumer<StaleTermException> onLost;
  private AssignmentStore.Lease lease;
  private long term;
  /** When the last store-lease request that succeeded was sent (ticker nanoseconds). */
  private long leaseSentAt;
  /** How long the store lease lives from {@link #leaseSentAt} (the shorter of asked and granted). */
  private long leaseTtlNanos;
  /** Set by a pause of the manager: no grant until a renewal sent after this time succeeds. */
  private long renewAfter = Long.MIN_VALUE;
  private boolean stallPending;
  private boolean renewing;
  private int renewFailures;
  private boolean loggedStale;
  private boolean closed;

  /**
   * @param io where renewals run (they may block)
   * @param onLost told, on the loop, once, when a renewal finds that another term was granted
   */
  StoreLease(AssignmentStore store, Executor io, Loop loop, Ticker ticker, Consumer<StaleTermException> onLost) {
    this.store = store;
    this.io = io;
    this.loop = loop;
    this.ticker = ticker;
    this.onLost = onLost;
  }

  /**
   * The lease {@code l} was granted to a request sent at {@code sent} (ticker nanoseconds) that
   * asked for {@code asked}. Loop only.
   */
  void acquired(AssignmentStore.Lease l, long sent, Duration asked) {
    loop.checkOnLoop();
    lease = l;
    term = l.term();
    leaseSentAt = sent;
    // A store may round a lease up, never down; count the shorter, which is surely live.
    leaseTtlNanos = Math.min(asked.toNanos(), l.ttl().toNanos());
  }

  /**
   * Renews the leadership lease off the loop; if the lease is lost (another manager was granted a
   * term), {@code onLost} is told at once. A store that cannot be reached is retried with
   * back-off (100 ms doubling, up to a third of the lease): saves under the term stay fenced by
   * the store meanwhile, and {@link #leads} turns false once the lease may have lapsed. One
   * renewal at a time. Loop only.
   */
  void renew() {
    loop.checkOnLoop();
    AssignmentStore.Lease l = lease;
    if (closed || l == null || renewing) {
      return;
    }
    renewing = true;
    long sent = ticker.nanoTime();
    CompletableFuture.supplyAsync(() -> store.renew(l) ? -1L
        : store.leader().map(AssignmentStore.Leader::term).orElse(l.term() + 1), io)
        .whenCompleteAsync((newerTerm, err) -> {
          renewing = false;
          if (closed) {
            return;
          }
          if (err != null) {
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            renewFailures++;
            long backoff = Math.min(TimeUnit.MILLISECONDS.toNanos(100) << Math.min(renewFailures - 1, 16),
                Math.max(leaseTtlNanos / 3, 1));
            log.warn("shard manager term {}: renewing the store lease failed ({} in a row; retry in {} ms): {}",
                term, renewFailures, TimeUnit.NANOSECONDS.toMillis(backoff), cause.toString());
            loop.schedule(this::renew, Duration.ofNanos(backoff));
          } else if (newerTerm >= 0) {
            log.error("shard manager term {} is deposed: its lease was lost (term {} was granted)", term, newerTerm);
            onLost.accept(new StaleTermException(store.toString(), term, newerTerm));
          } else {
            if (renewFailures > 0 || loggedStale) {
              log.info("shard manager term {}: the store lease is renewed again; granting pod leases", term);
            }
            renewFailures = 0;
            loggedStale = false;
            if (sent - leaseSentAt > 0) {
              leaseSentAt = sent;
            }
            if (stallPending && sent - renewAfter >= 0) {
              stallPending = false;
            } else if (stallPending) {
              renew(); // sent before the pause: it proves nothing about now
            }
          }
        }, loop);
  }

  /**
   * Whether this manager surely still holds its store lease at {@code now}, so that it may grant
   * or renew a pod's lease: not closed, no pause unanswered by a renewal, and less than the store
   * lease since the last successful renewal was sent. Loop only.
   */
  boolean leads(long now) {
    loop.checkOnLoop();
    if (closed || lease == null) {
      return false;
    }
    boolean fresh = !stallPending && now - leaseSentAt <= leaseTtlNanos;
    if (!fresh && !loggedStale) {
      loggedStale = true;
      log.warn("shard manager term {}: the store lease was last renewed {} ms ago (sent), the lease is {} ms{};"
          + " no pod lease is granted or renewed until a renewal succeeds", term,
          TimeUnit.NANOSECONDS.toMillis(now - leaseSentAt), TimeUnit.NANOSECONDS.toMillis(leaseTtlNanos),
          stallPending ? ", and the manager was paused" : "");
    }
    return fresh;
  }

  /**
   * The manager was paused (its process stopped, its loop starved): grant nothing until a store
   * renewal sent from now on succeeds, and send one at once. Loop only.
   */
  void stalled() {
    loop.checkOnLoop();
    if (closed || lease == null) {
      return;
    }
    stallPending = true;
    renewAfter = ticker.nanoTime();
    if (!renewing) {
      renew();
    }
    // else: the renewal in flight was sent before the pause; its success does not clear the
    // pause, and the periodic renewal or its retry sends the next one.
  }

  /** How long the store lease lives from a renewal's send time, in nanoseconds (0 before the start). */
  long ttlNanos() {
    return leaseTtlNanos;
  }

  /** Renews no more and leads no more (the journal closed, or the manager was deposed). Loop only. */
  void close() {
    closed = true;
  }
}
