package io.atoll.manager;

import io.atoll.core.PodId;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * The pods whose tombstones (GONE entries) were pruned from the config, remembered so that none
 * of them can register again: a pod declared gone comes back only as a new incarnation, whether
 * its tombstone is still listed or not. Each id is kept as a 64-bit fingerprint (8 bytes instead
 * of its ~50), the newest {@code cap} of them, oldest dropped first; see docs/architecture.md for
 * why a bounded memory is enough.
 *
 * <p>Immutable and thread-safe.
 */
public final class PrunedPods {

  /** None pruned. */
  static final PrunedPods NONE = new PrunedPods(new long[0]);

  private final long[] fingerprints; // oldest first
  private final Set<Long> index;

  private PrunedPods(long[] fingerprints) {
    this.fingerprints = fingerprints;
    this.index = new HashSet<>(fingerprints.length * 2);
    for (long f : fingerprints) {
      index.add(f);
    }
  }

  /** Pruned ids from their fingerprints, oldest first. */
  static PrunedPods of(long[] fingerprints) {
    return fingerprints.length == 0 ? NONE : new PrunedPods(fingerprints.clone());
  }

  /** Whether {@code pod} was pruned (or, with odds of about n in 2^64, shares a fingerprint with one). */
  public boolean contains(PodId pod) {
    return index.contains(fingerprint(pod));
  }

  /** These ids and {@code more}, keeping the newest {@code cap}. */
  PrunedPods plus(Collection<PodId> more, int cap) {
    if (more.isEmpty()) {
      return this;
    }
    long[] all = Arrays.copyOf(fingerprints, fingerprints.length + more.size());
    int n = fingerprints.length;
    for (PodId p : more) {
      all[n++] = fingerprint(p);
    }
    return new PrunedPods(all.length <= cap ? all : Arrays.copyOfRange(all, all.length - cap, all.length));
  }

  /** The fingerprints, oldest first. */
  long[] fingerprints() {
    return fingerprints.clone();
  }

  /** How many are remembered. */
  public int size() {
    return fingerprints.length;
  }

  /** A stable 64-bit fingerprint of a pod id (FNV-1a over its parts, then a SplitMix64 finish). */
  static long fingerprint(PodId pod) {
    long h = 0xcbf29ce484222325L;
    for (byte b : pod.address().host().getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xFF)) * 0x100000001b3L;
    }
    h = (h ^ pod.address().port()) * 0x100000001b3L;
    h ^= pod.incarnation() * 0x9E3779B97F4A7C15L;
    h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
    h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
    return h ^ (h >>> 31);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PrunedPods p && Arrays.equals(fingerprints, p.fingerprints);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(fingerprints);
  }

  @Override
  public String toString() {
    return "PrunedPods[" + fingerprints.length + "]";
  }
}
