package io.atoll.runtime.internal.cluster;

import io.atoll.core.PodAddress;
import io.atoll.runtime.internal.util.GuardedBy;
import io.atoll.transport.grpc.Wire;
import io.grpc.ManagedChannel;
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
 */
public final class ManagerAddresses implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ManagerAddresses.class);

  private final List<PodAddress> configured;
  private final Function<PodAddress, ManagedChannel> open;
  @GuardedBy("this")
  private PodAddress current;
  @GuardedBy("this")
  private ManagedChannel channel;
  @GuardedBy("this")
  private int next;
  @GuardedBy("this")
  private boolean closed;

  /**
   * @param addresses every manager address, at least one (duplicates are dropped)
   * @param open opens a channel to an address ({@code Wire::channel} in production)
   */
  public ManagerAddresses(List<PodAddress> addresses, Function<PodAddress, ManagedChannel> open) {
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
    this.current = list.get(0);
    this.next = 1 % list.size();
    this.channel = open.apply(current);
  }

  /** Every configured address, in order. */
  public List<PodAddress> all() {
    return configured;
  }

  /** The manager the pod talks to now. */
  public synchronized PodAddress current() {
    return current;
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
    ManagedChannel old;
    PodAddress from;
    PodAddress to;
    synchronized (this) {
      if (closed || !failedAt.equals(current)) {
        return false;
      }
      PodAddress pick = leader.orElse(null);
      for (int i = 0; pick == null && i < configured.size(); i++) {
        PodAddress c = configured.get(next);
        next = (next + 1) % configured.size();
        if (!c.equals(current)) {
          pick = c;
        }
      }
      if (pick == null || pick.equals(current)) {
        return false;
      }
      to = pick;
      from = current;
      old = channel;
      current = to;
      channel = open.apply(to);
    }
    log.info("shard manager link: {} -> {}{}", from, to, leader.isPresent() ? " (named as the leader)" : "");
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
}
