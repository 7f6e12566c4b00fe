package io.atoll.core;

import java.util.Objects;

/**
 * The identity of one run of a pod: its address and an incarnation number chosen when it starts.
 *
 * <p>A pod restarted at the same address gets a new incarnation, so it is never confused with the
 * old one: shards owned by the old incarnation are not owned by the new one.
 *
 * @param address where the pod listens
 * @param incarnation a number unique to this run of the pod (e.g. random at start)
 */
public record PodId(PodAddress address, long incarnation) implements Comparable<PodId> {

  /** Validates the parts. */
  public PodId {
    Objects.requireNonNull(address, "address");
  }

  @Override
  public int compareTo(PodId other) {
    int c = address.compareTo(other.address);
    return c != 0 ? c : Long.compare(incarnation, other.incarnation);
  }

  @Override
  public String toString() {
    return address + "#" + Long.toHexString(incarnation);
  }
}
