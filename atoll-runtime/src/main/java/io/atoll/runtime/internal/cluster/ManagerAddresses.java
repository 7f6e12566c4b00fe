package io.atoll.runtime.internal.cluster;

import io.atoll.core.PodAddress;
import io.atoll.core.Ticker;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.transport.grpc.LeaderHint;
import io.atoll.transport.grpc.Wire;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard managers a pod knows, and the one it talks to: the pod starts with the first, and
 * moves on when a call fails — to the leader a standby named ({@code LeaderHint}), or else to the
 * next address in turn. One channel, to the current manager, is open at a time. Thread-safe.
 *
 * <p><b>No ping-pong with a dead leader.</b> After a leader dies, a standby goes on naming it
 * until its store lease lapses (seconds). A manager that could not be reached at all is marked
 * <em>down</em> for {@link #DOWN_NANOS}, with the term it was named under: a standby naming it
 * again under that term (or when either term is unknown) is not followed meanwhile — the pod stays with the live standby, which
 * takes over or names a newer leader — and the next address is picked among those not down. So
 * the link moves once per {@code DOWN_NANOS} at most instead of at every retry, and is already
 * at the standby when it leads. An address found down again under the same term is passed over
 * twice as long each time (up to {@link #MAX_DOWN_NANOS}), until it answers or is named under a
 * newer term.
 *
 * <p><b>Settling.</b> Every caller (the renewals, the config watch, registration) reports its
 * failures here, each on its own retry pacing, so a link that moved at every report would switch
 * several times a second while a leader change is under way. After a move, the next one waits
 * {@link #SWITCH_BACKOFF} (250 ms doubling to 2 s while moves go on without an answer), except to
 * follow a leader named under a term newer than any seen: that is the news the link waits for. A
 * hint under a term older than one already seen comes from a standby that is behind, and is not
 * followed. An answer from the current manager ({@link #answered}), or {@link #QUIET_NANOS}
 * without a move, ends the back-off.
 */
public final class ManagerAddresses implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ManagerAddresses.class);

  /** How long an address that could not be reached is passed over. */
  static final long DOWN_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

  /** The longest an address is passed over after it could not be reached again and again. */
  static final long MAX_DOWN_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(4);

  /** The pause between two moves while moves go on without an answer. */
  static final io.atoll.runtime.internal.util.BackoffPolicy SWITCH_BACKOFF =
      io.atoll.runtime.internal.util.BackoffPolicy.exponential(java.time.Duration.ofMillis(250),
          java.time.Duration.ofSeconds(2));

  /** No move for this long ends the switch back-off as an answer does. */
  static final long QUIET_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(8);

  /**
   * An address that could not be reached, when, the term it had been named leader under (0: none),
   * and for how long it is passed over.
   */
  private record Down(long atNanos, long term, long forNanos) {}

  private final List<PodAddress> configured;
  private final Function<PodAddress, ManagedChannel> open;
  private final Ticker ticker;
  @GuardedBy("this")
  private PodAddress current;
  @GuardedBy("this")
  private long currentTerm; // the term current was named leader under, 0 if not named
  @GuardedBy("this")
  private ManagedChannel channel;
  @GuardedBy("this")
  private int next;
  @GuardedBy("this")
  private final java.util.Map<PodAddress, Down> down = new java.util.HashMap<>();
  @GuardedBy("this")
  private boolean closed;
  @GuardedBy("this")
  private long highestTerm; // the newest term a hint named
  @GuardedBy("this")
  private long movedAtNanos;
  @GuardedBy("this")
  private long switchBackoffNanos; // 0: the next move may come at once
  @GuardedBy("this")
  private long switches;
  @GuardedBy("this")
  private long answeredAtNanos; // the last answer on the current channel, or when it was opened
  @GuardedBy("this")
  private long reopens;

  /**
   * @param addresses every manager address, at least one (duplicates are dropped)
   * @param open opens a channel to an address ({@code Wire::channel} in production)
   */
  public ManagerAddresses(List<PodAddress> addresses, Function<PodAddress, ManagedChannel> open) {
    this(addresses, open, Ticker.SYSTEM);
  }

  /**
   * @param addresses every manager address, at least one (duplicates are dropped)
   * @param open opens a channel to an address ({@code Wire::channel} in production)
   * @param ticker the clock of the down marks
   */
  public ManagerAddresses(List<PodAddress> addresses, Function<PodAddress, ManagedChannel> open, Ticker ticker) {
    List<PodAddress> list = new ArrayList<>();
    for (PodAddress a : addresses) {
      if (!list.contains(Objects.requireNonNull(a, "address"))) {
        list.add(a);
      }
    }
    if (list.isEmpty()) {
      throw new IllegalArgumentException("managers: none (expected: at least one host:port)");
    }
    this.configured = List.copyOf(list);
    this.open = open;
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.current = list.get(0);
    this.next = 1 % list.size();
    this.channel = open.apply(current);
    this.answeredAtNanos = ticker.nanoTime();
  }

  /** Every configured address, in order. */
  public List<PodAddress> all() {
    return configured;
  }

  /** The manager the pod talks to now. */
  public synchronized PodAddress current() {
    return current;
  }

  /** How many times the link moved to another manager. */
  public synchronized long switches() {
    return switches;
  }

  /**
   * A call to {@code at} was answered by a manager that leads: it is up, and the link has settled
   * (the next move, if one is needed, may come at once).
   */
  public synchronized void answered(PodAddress at) {
    if (at.equals(current)) {
      switchBackoffNanos = 0;
      down.remove(at);
      answeredAtNanos = ticker.nanoTime();
    }
  }

  /**
   * A call to {@code at} got no answer (no connection, or none within its deadline): if the
   * current channel has answered nothing for {@code silenceNanos} since it was opened or last
   * answered, it is replaced by a fresh one, and its calls fail (their callers retry on the new one).
   *
   * <p>Why: gRPC keeps one connection attempt per channel and waits for it. An attempt that hangs
   * (a connection whose bytes vanish, a handshake that never completes) holds every call until
   * keepalive or the connect timeout gives up, 15 to 30 s, while the manager may be up and
   * answering everybody else: a pod whose only manager restarted stayed unable to renew, fenced
   * itself, and then could not register again for as long. A fresh channel makes a new
   * connection. With several managers the link moves instead ({@link #failed(PodAddress, Throwable)}),
   * which opens a fresh channel too.
   *
   * @return whether the channel was replaced
   */
  public boolean reopenIfSilent(PodAddress at, long silenceNanos) {
    ManagedChannel old;
    long silentMillis;
    synchronized (this) {
      long now = ticker.nanoTime();
      if (closed || !at.equals(current) || now - answeredAtNanos < silenceNanos) {
        return false;
      }
      silentMillis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(now - answeredAtNanos);
      old = channel;
      channel = open.apply(current);
      answeredAtNanos = now; // the fresh channel gets its own silence period
      reopens++;
    }
    log.debug("shard manager link: no answer from {} for {} ms; its channel is replaced by a fresh one", at,
        silentMillis);
    Wire.close(old);
    return true;
  }

  /** How many times the channel to the current manager was replaced ({@link #reopenIfSilent}). */
  public synchronized long reopens() {
    return reopens;
  }

  /** The channel to {@link #current()}. */
  public synchronized ManagedChannel channel() {
    return channel;
  }

  /**
   * A call to {@code failedAt} failed: talk to {@code leader} if a standby named one, else to the
   * next configured address. A failure reported for an address the pod already left changes
   * nothing (another call moved on first).
   *
   * @return whether the current manager changed
   */
  public boolean failed(PodAddress failedAt, Optional<PodAddress> leader) {
    return move(failedAt, leader.map(l -> new LeaderHint.Refusal(Optional.of(l), 0)));
  }

  /**
   * A call to {@code failedAt} failed with {@code failure}: if a standby refused it, follow the
   * leader it names (unless that one is down under the same term) or stay; if no manager answered,
   * mark it down and move to the next address that is not.
   *
   * @return whether the current manager changed
   */
  public boolean failed(PodAddress failedAt, Throwable failure) {
    return move(failedAt, LeaderHint.refusal(failure), unanswered(failure));
  }

  /**
   * A call made on {@code channel} to {@code failedAt} failed with {@code failure}: as
   * {@link #failed(PodAddress, Throwable)}, unless that channel is no longer the link's. Then the
   * failure is the channel's own closing, by a reopen ({@link #reopenIfSilent}) or a move, and says
   * nothing about the manager: a long-lived call (the config watch) on a channel replaced for
   * another call's silence must not mark a live manager down and move the link off it.
   *
   * @return whether the current manager changed
   */
  public boolean failed(ManagedChannel channel, PodAddress failedAt, Throwable failure) {
    synchronized (this) {
      if (channel != this.channel) {
        return false;
      }
    }
    return failed(failedAt, failure);
  }

  /**
   * A call to {@code failedAt} failed with {@code failure}: as {@link #failed(PodAddress, Throwable)};
   * and if the link stays where it is and the failure was no answer at all, or a standby's refusal
   * that names no leader, the channel is replaced if no leader has answered on it for
   * {@code silenceNanos} ({@link #reopenIfSilent}). The one step every caller of the managers takes
   * after a failure.
   *
   * <p>Why a standby naming no leader too: a standby answers so only while a takeover is under way,
   * which takes a store lease at most. A connection that a standby accepted as it handed its port to
   * the manager it became can outlive its server, and went on answering "a standby; no manager
   * leads" for minutes while the manager led on the same port (a pod declared dead could not join
   * again until that manager was killed). A fresh connection reaches whoever listens now.
   *
   * @return whether the call should be retried soon: the link moved, or its channel is fresh
   */
  public boolean failedOrReopened(PodAddress failedAt, Throwable failure, long silenceNanos) {
    if (failed(failedAt, failure)) {
      return true;
    }
    Optional<LeaderHint.Refusal> refusal = LeaderHint.refusal(failure);
    return unanswered(failure) && (refusal.isEmpty() || refusal.get().leader().isEmpty())
        && reopenIfSilent(failedAt, silenceNanos);
  }

  /** The configured managers, for messages: the one address, or the list. */
  public String describe() {
    return all().size() == 1 ? all().get(0).toString() : all().toString();
  }

  /**
   * Whether {@code failure} says the manager did not answer at all (no connection, or no reply
   * within the deadline): only then is it marked down. Any other status came from a live manager,
   * which a standby may name again at once.
   */
  static boolean unanswered(Throwable failure) {
    Status.Code code = Status.fromThrowable(failure).getCode();
    return code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED;
  }

  private boolean move(PodAddress failedAt, Optional<LeaderHint.Refusal> refusal) {
    return move(failedAt, refusal, true);
  }

  private boolean move(PodAddress failedAt, Optional<LeaderHint.Refusal> refusal, boolean unanswered) {
    ManagedChannel old;
    PodAddress from;
    PodAddress to;
    boolean named;
    synchronized (this) {
      if (closed || !failedAt.equals(current)) {
        return false;
      }
      long now = ticker.nanoTime();
      // an expired mark is kept (for its period) one more period, so that a repeat doubles it
      down.values().removeIf(d -> now - d.atNanos() >= 2 * d.forNanos());
      PodAddress pick = null;
      long pickTerm = 0;
      boolean news = false;
      if (refusal.isEmpty() && unanswered) {
        Down was = down.get(current);
        // down again, not named under a newer term since: pass it over twice as long
        long period = was != null && currentTerm <= was.term() || was != null && was.term() == 0
            ? Math.min(MAX_DOWN_NANOS, 2 * was.forNanos()) : DOWN_NANOS;
        down.put(current, new Down(now, currentTerm, period));
      } else if (refusal.isEmpty()) {
        down.remove(current);
      } else if (refusal.get().leader().isPresent()) {
        PodAddress leader = refusal.get().leader().get();
        long term = refusal.get().term();
        if (term > 0 && term < highestTerm) {
          return false; // a standby that is behind: a newer leader was already named
        }
        Down d = down.get(leader);
        if (d != null && now - d.atNanos() < d.forNanos()
            && (term == 0 || d.term() == 0 || term <= d.term())) {
          return false; // named again under the term it was down in (or either is unknown): stay
        }
        news = term > highestTerm;
        highestTerm = Math.max(highestTerm, term);
        pick = leader;
        pickTerm = term;
      }
      if (now - movedAtNanos >= QUIET_NANOS) {
        switchBackoffNanos = 0; // no move for a while: settled, even for a caller that reports no answers
      }
      boolean gated = !news && switchBackoffNanos > 0 && now - movedAtNanos < switchBackoffNanos;
      if (gated && pick != null) {
        return false; // moved a moment ago and heard no answer since: let the callers retry here first
      }
      final long at = now;
      java.util.function.Predicate<PodAddress> isDown = a -> {
        Down d = down.get(a);
        return d != null && at - d.atNanos() < d.forNanos();
      };
      for (int i = 0; pick == null && i < configured.size(); i++) {
        PodAddress c = configured.get(next);
        next = (next + 1) % configured.size();
        if (!c.equals(current) && !isDown.test(c)) {
          pick = c;
        }
      }
      if (pick != null && gated && !(refusal.isEmpty() && unanswered)) {
        return false; // an answering manager's error: no hurry to leave it again so soon
      }
      if (pick == null && refusal.isEmpty()) {
        if (gated) {
          return false; // every address is down: go round them, but at the back-off's pace
        }
        // every other address is down too: go round them anyway
        pick = configured.get(next);
        next = (next + 1) % configured.size();
      }
      if (pick == null || pick.equals(current)) {
        return false;
      }
      named = pickTerm > 0 || (refusal.isPresent() && refusal.get().leader().isPresent());
      to = pick;
      from = current;
      old = channel;
      current = to;
      currentTerm = pickTerm;
      channel = open.apply(to);
      answeredAtNanos = now;
      switches++;
      movedAtNanos = now;
      switchBackoffNanos = SWITCH_BACKOFF.nextNanos(switchBackoffNanos);
    }
    log.info("shard manager link: {} -> {}{}", from, to, named ? " (named as the leader)" : "");
    Wire.close(old);
    return true;
  }

  /** Closes the channel. */
  @Override
  public void close() {
    ManagedChannel c;
    synchronized (this) {
      closed = true;
      c = channel;
    }
    Wire.close(c);
  }

  /**
   * {@code stub} as calls to the managers should be made: with one manager, a call waits for it to
   * be reachable (it may be restarting); with several, a call to one that cannot be reached fails at
   * once, so that the caller moves on to another.
   */
  public <S extends io.grpc.stub.AbstractStub<S>> S readyStub(S stub) {
    return configured.size() == 1 ? stub.withWaitForReady() : stub;
  }
}
