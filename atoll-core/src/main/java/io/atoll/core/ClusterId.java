package io.atoll.core;

import java.util.HexFormat;
import java.util.random.RandomGenerator;

/**
 * The identity of one cluster: 128 random bits chosen by its shard manager at its first start
 * and kept in its state. Every config carries it; configs of two clusters never merge, so two
 * clusters that meet (a reused address, a pod pointed at the wrong manager) stay apart.
 *
 * <p>{@link #NONE} is the id of a config that belongs to no cluster yet (an empty config, a
 * cluster of Atoll KV nodes, a state written before clusters had ids): it merges with any id and
 * takes it.
 *
 * @param high the first 64 bits
 * @param low the last 64 bits
 */
public record ClusterId(long high, long low) {

  /** No cluster (yet). */
  public static final ClusterId NONE = new ClusterId(0, 0);

  private static final HexFormat HEX = HexFormat.of();

  /** A new random id, never {@link #NONE}. */
  public static ClusterId random(RandomGenerator random) {
    ClusterId id;
    do {
      id = new ClusterId(random.nextLong(), random.nextLong());
    } while (id.isNone());
    return id;
  }

  /** Whether this is {@link #NONE}. */
  public boolean isNone() {
    return high == 0 && low == 0;
  }

  /**
   * Parses the 32 hex digits {@link #toString()} writes; the empty string is {@link #NONE}.
   *
   * @throws IllegalArgumentException naming the text and the expected form
   */
  public static ClusterId parse(String text) {
    if (text.isEmpty()) {
      return NONE;
    }
    if (text.length() != 32) {
      throw new IllegalArgumentException("cluster id: '" + (text.length() > 40 ? text.substring(0, 40) + "..." : text)
          + "' (expected: 32 hex digits)");
    }
    try {
      return new ClusterId(HexFormat.fromHexDigitsToLong(text, 0, 16), HexFormat.fromHexDigitsToLong(text, 16, 32));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("cluster id: '" + text + "' (expected: 32 hex digits)");
    }
  }

  /** 32 hex digits, or the empty string for {@link #NONE} (so that it round-trips through {@link #parse}). */
  @Override
  public String toString() {
    return isNone() ? "" : HEX.toHexDigits(high) + HEX.toHexDigits(low);
  }
}
