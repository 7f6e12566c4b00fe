package io.atoll.core;

import java.util.Objects;

/**
 * A pod's entry in a {@link ClusterConfig}: the pod, whether it is a member, and the epoch at which
 * this entry was written. Merges keep the entry with the greater epoch.
 *
 * @param pod the pod
 * @param status member or gone
 * @param epoch the epoch of this entry, at least 0
 */
public record PodEntry(Pod pod, PodStatus status, long epoch) {

  /** Validates the parts. */
  public PodEntry {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(status, "status");
    if (epoch < 0) {
      throw new IllegalArgumentException("epoch: " + epoch + " (expected: >= 0)");
    }
  }

  /** The pod's identity. */
  public PodId id() {
    return pod.id();
  }

  /** A total order used to break ties between entries of equal epoch, so merge stays commutative. */
  static int compareForMerge(PodEntry a, PodEntry b) {
    int c = Long.compare(a.epoch, b.epoch);
    if (c != 0) {
      return c;
    }
    c = a.status.compareTo(b.status); // GONE wins a tie: leaving is final
    if (c != 0) {
      return c;
    }
    c = a.pod.version().value().compareTo(b.pod.version().value());
    if (c != 0) {
      return c;
    }
    c = compareRoles(a.pod.roles(), b.pod.roles());
    return c != 0 ? c : Integer.compare(a.pod.tlsPort(), b.pod.tlsPort());
  }

  private static int compareRoles(java.util.List<String> a, java.util.List<String> b) {
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      int c = a.get(i).compareTo(b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }
}
