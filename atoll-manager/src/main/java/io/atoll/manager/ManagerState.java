package io.atoll.manager;

import io.atoll.core.ClusterConfig;
import io.atoll.core.spi.StoreException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * What the shard manager persists, as one blob: its term, the lease it promised, the pods whose
 * tombstones were pruned, and the cluster config.
 *
 * <pre>
 * magic 'A' 'M', format 3, term (8 bytes),
 * lease ttl in ms (8 bytes), lease margin in ms (8 bytes),
 * pruned count (4 bytes), that many 8-byte fingerprints (oldest first),
 * signing key length (4 bytes), that many bytes of the key (UTF-8, possibly none),
 * the config's own encoding
 * </pre>
 *
 * <p>Formats 1 (term, config) and 2 (no key) are still read: format 1's lease is unknown (zero)
 * and nothing was pruned; neither holds a key.
 *
 * <p>The signing key is the cluster's own when its managers run without a key file: whoever can
 * read the store can then sign configs and issue credentials (whoever can write it rules the
 * cluster anyway). It never leaves the managers: pods get the config, not the state.
 *
 * @param term the term of the manager that wrote it; each manager start writes term + 1
 * @param config the assignments
 * @param leaseTtl the longest lease a pod may hold from a renewal granted under this state (zero:
 *     unknown); a manager that starts waits at least this plus {@code leaseMargin} for pods that
 *     do not renew, whatever its own setting
 * @param leaseMargin the margin that came with {@code leaseTtl}
 * @param pruned the pods whose tombstones were pruned; none of them may register again
 * @param signingKey the cluster's signing key ({@code ConfigSigner#encodedKey}), or "" if the
 *     managers bring their own key file
 */
public record ManagerState(long term, ClusterConfig config, Duration leaseTtl, Duration leaseMargin,
    PrunedPods pruned, String signingKey) {

  private static final byte FORMAT_1 = 1;
  private static final byte FORMAT_2 = 2;
  private static final byte FORMAT = 3;
  /** The longest signing key a state may hold. */
  static final int MAX_KEY = 4096;
  /** The most pruned fingerprints a state may hold (see {@link Journal}). */
  static final int MAX_PRUNED = 1 << 20;

  /** Validates the parts. */
  public ManagerState {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(leaseTtl, "leaseTtl");
    Objects.requireNonNull(leaseMargin, "leaseMargin");
    Objects.requireNonNull(pruned, "pruned");
    Objects.requireNonNull(signingKey, "signingKey");
    if (leaseTtl.isNegative() || leaseMargin.isNegative()) {
      throw new IllegalArgumentException("lease: " + leaseTtl + " + " + leaseMargin + " (expected: >= 0)");
    }
  }

  /** A state with no signing key. */
  public ManagerState(long term, ClusterConfig config, Duration leaseTtl, Duration leaseMargin, PrunedPods pruned) {
    this(term, config, leaseTtl, leaseMargin, pruned, "");
  }

  /** A state with no lease known, nothing pruned and no signing key. */
  public ManagerState(long term, ClusterConfig config) {
    this(term, config, Duration.ZERO, Duration.ZERO, PrunedPods.NONE);
  }

  /** This state with another config (a layout the manager's settings extend). */
  ManagerState withConfig(ClusterConfig c) {
    return new ManagerState(term, c, leaseTtl, leaseMargin, pruned, signingKey);
  }

  /** Encodes the state. */
  public byte[] encode() {
    byte[] c = config.encode();
    long[] p = pruned.fingerprints();
    byte[] k = signingKey.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(3 + 8 + 16 + 4 + p.length * 8 + 4 + k.length + c.length)
        .put((byte) 'A').put((byte) 'M').put(FORMAT).putLong(term)
        .putLong(leaseTtl.toMillis()).putLong(leaseMargin.toMillis()).putInt(p.length);
    for (long f : p) {
      b.putLong(f);
    }
    return b.putInt(k.length).put(k).put(c).array();
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
    String key = "";
    if (bytes[2] == FORMAT || bytes[2] == FORMAT_2) {
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
      if (bytes[2] == FORMAT) {
        int k = b.remaining() < 4 ? -1 : b.getInt();
        if (k < 0 || k > MAX_KEY || k > b.remaining()) {
          throw new StoreException("manager state: signing key of " + k + " bytes (expected: 0.." + MAX_KEY
              + " and at most what " + b.remaining() + " bytes hold)");
        }
        byte[] kb = new byte[k];
        b.get(kb);
        key = new String(kb, StandardCharsets.UTF_8);
      }
    } else if (bytes[2] != FORMAT_1) {
      throw new StoreException("manager state: format " + bytes[2] + " (expected: " + FORMAT_1 + ".." + FORMAT + ")");
    }
    try {
      return new ManagerState(term, ClusterConfig.decode(Arrays.copyOfRange(bytes, b.position(), bytes.length)), ttl,
          margin, pruned, key);
    } catch (IllegalArgumentException e) {
      throw new StoreException("manager state: " + e.getMessage(), e);
    }
  }
}
