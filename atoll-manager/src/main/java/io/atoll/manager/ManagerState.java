package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.StoreException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * What the shard manager persists, as one blob: its term, the lease it promised, the pods whose
 * tombstones were pruned, and the cluster config.
 *
 * <pre>
 * magic 'A' 'M', format 2, term (8 bytes),
 * lease ttl in ms (8 bytes), lease margin in ms (8 bytes),
 * pruned count (4 bytes), that many 8-byte fingerprints (oldest first),
 * the config's own encoding
 * </pre>
 *
 * <p>Format 1 (term, config) is still read: its lease is unknown (zero) and nothing was pruned.
 *
 * @param term the term of the manager that wrote it; each manager start writes term + 1
 * @param config the assignments
 * @param leaseTtl the longest lease a pod may hold from a renewal granted under this state (zero:
 *     unknown); a manager that starts waits at least this plus {@code leaseMargin} for pods that
 *     do not renew, whatever its own setting
 * @param leaseMargin the margin that came with {@code leaseTtl}
 * @param pruned the pods whose tombstones were pruned; none of them may register again
 */
public record ManagerState(long term, ClusterConfig config, Duration leaseTtl, Duration leaseMargin,
    PrunedPods pruned) {

  private static final byte FORMAT_1 = 1;
  private static final byte FORMAT = 2;
  /** The most pruned fingerprints a state may hold (see {@link Journal}). */
  static final int MAX_PRUNED = 1 << 20;

  /** Validates the parts. */
  public ManagerState {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(leaseTtl, "leaseTtl");
    Objects.requireNonNull(leaseMargin, "leaseMargin");
    Objects.requireNonNull(pruned, "pruned");
    if (leaseTtl.isNegative() || leaseMargin.isNegative()) {
      throw new IllegalArgumentException("lease: " + leaseTtl + " + " + leaseMargin + " (expected: >= 0)");
    }
  }

  /** A state with no lease known and nothing pruned. */
  public ManagerState(long term, ClusterConfig config) {
    this(term, config, Duration.ZERO, Duration.ZERO, PrunedPods.NONE);
  }

  /** Encodes the state. */
  public byte[] encode() {
    byte[] c = config.encode();
    long[] p = pruned.fingerprints();
    ByteBuffer b = ByteBuffer.allocate(3 + 8 + 16 + 4 + p.length * 8 + c.length)
        .put((byte) 'A').put((byte) 'M').put(FORMAT).putLong(term)
        .putLong(leaseTtl.toMillis()).putLong(leaseMargin.toMillis()).putInt(p.length);
    for (long f : p) {
      b.putLong(f);
    }
    return b.put(c).array();
  }

  /**
   * Decodes a stored state.
   *
   * @throws StoreException if the bytes are not a manager state, saying what was wrong
   */
  public static ManagerState decode(byte[] bytes) {
    if (bytes.length < 11 || bytes[0] != 'A' || bytes[1] != 'M') {
      throw new StoreException("manager state: " + bytes.length + " bytes without the 'AM' header"
          + " (expected: a state written by an Atoll shard manager)");
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    b.position(3);
    long term = b.getLong();
    Duration ttl = Duration.ZERO;
    Duration margin = Duration.ZERO;
    PrunedPods pruned = PrunedPods.NONE;
    if (bytes[2] == FORMAT) {
      if (b.remaining() < 20) {
        throw new StoreException("manager state: truncated at byte " + b.position() + " (expected: lease and pruned count)");
      }
      long ttlMs = b.getLong();
      long marginMs = b.getLong();
      int n = b.getInt();
      if (ttlMs < 0 || marginMs < 0) {
        throw new StoreException("manager state: lease " + ttlMs + " + " + marginMs + " ms (expected: >= 0)");
      }
      if (n < 0 || n > MAX_PRUNED || (long) n * 8 > b.remaining()) {
        throw new StoreException("manager state: " + n + " pruned pods (expected: 0.." + MAX_PRUNED
            + " and at most what " + b.remaining() + " bytes hold)");
      }
      long[] f = new long[n];
      for (int i = 0; i < n; i++) {
        f[i] = b.getLong();
      }
      ttl = Duration.ofMillis(ttlMs);
      margin = Duration.ofMillis(marginMs);
      pruned = PrunedPods.of(f);
    } else if (bytes[2] != FORMAT_1) {
      throw new StoreException("manager state: format " + bytes[2] + " (expected: " + FORMAT_1 + " or " + FORMAT + ")");
    }
    try {
      return new ManagerState(term, ClusterConfig.decode(Arrays.copyOfRange(bytes, b.position(), bytes.length)), ttl,
          margin, pruned);
    } catch (IllegalArgumentException e) {
      throw new StoreException("manager state: " + e.getMessage(), e);
    }
  }
}
