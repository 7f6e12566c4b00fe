package io.atoll.core;

import java.util.Objects;

/**
 * The version of the code a pod runs, used to prefer new pods during a rolling update.
 *
 * <p>Ordered the way people read versions: dot- or dash-separated parts, numeric parts compared as
 * numbers ({@code 1.10 > 1.9}), other parts as text; a longer version is newer than its prefix
 * unless it continues with text, a pre-release ({@code 1.0.0-rc1 < 1.0.0}).
 *
 * @param value the version text, not blank, at most {@link #MAX_BYTES} bytes of UTF-8
 */
public record PodVersion(String value) implements Comparable<PodVersion> {

  /**
   * The version every Atoll KV node registers with in managed mode: a manager that has one among
   * its pods serves the KV slot space, which KV nodes follow only while it is the one space.
   */
  public static final PodVersion KV = new PodVersion("kv");

  /**
   * How the manager names an Atoll KV node it made a replica: {@code kv.of.<incarnation>}, the
   * incarnation (hex) of the KV node whose slots it copies.
   */
  private static final String KV_REPLICA_PREFIX = "kv.of.";

  /**
   * How the manager marks a KV primary declared dead whose replica took its slots over: {@code
   * kv.to.<incarnation>}, the incarnation (hex) of that replica, its <em>heir</em>. Written on the
   * dead node's tombstone, so that every node learns from the config alone who went on with its
   * hand-offs, migration marks and import records.
   */
  private static final String KV_HEIR_PREFIX = "kv.to.";

  /** The longest version, in bytes of UTF-8 (not characters): what a config can carry. */
  public static final int MAX_BYTES = 128;

  /**
   * Validates the text with the config decoder's own rules.
   *
   * @throws IllegalArgumentException saying what it got and what is expected
   */
  public PodVersion {
    Objects.requireNonNull(value, "value");
    Texts.check("version", value, MAX_BYTES, "a version, not blank");
  }

  /**
   * The version the manager gives a managed Atoll KV node it makes a replica of the KV node of
   * incarnation {@code primary}.
   */
  public static PodVersion kvReplicaOf(long primary) {
    return new PodVersion(KV_REPLICA_PREFIX + Long.toHexString(primary));
  }

  /**
   * The version the manager writes on the tombstone of a KV primary declared dead whose slots the
   * replica of incarnation {@code heir} took over.
   */
  public static PodVersion kvTakenOverBy(long heir) {
    return new PodVersion(KV_HEIR_PREFIX + Long.toHexString(heir));
  }

  /** Whether this is a managed Atoll KV node's version: {@link #KV}, a replica's, or a taken-over primary's. */
  public boolean isKv() {
    return equals(KV) || kvPrimary().isPresent() || kvHeir().isPresent();
  }

  /**
   * The incarnation of the replica that took over the KV primary of this version ({@link
   * #kvTakenOverBy}); empty for any other version.
   */
  public java.util.OptionalLong kvHeir() {
    return incarnationAfter(KV_HEIR_PREFIX);
  }

  /**
   * The incarnation of the KV node a replica's version names ({@link #kvReplicaOf}); empty for any
   * other version.
   */
  public java.util.OptionalLong kvPrimary() {
    return incarnationAfter(KV_REPLICA_PREFIX);
  }

  private java.util.OptionalLong incarnationAfter(String prefix) {
    if (!value.startsWith(prefix)) {
      return java.util.OptionalLong.empty();
    }
    String hex = value.substring(prefix.length());
    if (hex.isEmpty() || hex.length() > 16) {
      return java.util.OptionalLong.empty();
    }
    try {
      return java.util.OptionalLong.of(Long.parseUnsignedLong(hex, 16));
    } catch (NumberFormatException e) {
      return java.util.OptionalLong.empty();
    }
  }

  /** Shorthand for {@code new PodVersion(value)}. */
  public static PodVersion of(String value) {
    return new PodVersion(value);
  }

  @Override
  public int compareTo(PodVersion other) {
    String[] a = value.split("[.\\-]");
    String[] b = other.value.split("[.\\-]");
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      int c = comparePart(a[i], b[i]);
      if (c != 0) {
        return c;
      }
    }
    if (a.length != b.length) {
      // A longer version is newer ("1.0.1" > "1.0") unless it goes on with text: a pre-release
      // ("1.0.0-rc1" < "1.0.0").
      String[] longer = a.length > b.length ? a : b;
      int sign = a.length > b.length ? 1 : -1;
      return isNumber(longer[Math.min(a.length, b.length)]) ? sign : -sign;
    }
    return value.compareTo(other.value);
  }

  private static int comparePart(String x, String y) {
    boolean xn = isNumber(x);
    boolean yn = isNumber(y);
    if (xn && yn) {
      String xs = stripZeros(x);
      String ys = stripZeros(y);
      int c = Integer.compare(xs.length(), ys.length());
      return c != 0 ? c : xs.compareTo(ys);
    }
    if (xn != yn) {
      return xn ? 1 : -1; // "1.0.1" > "1.0.beta"
    }
    return x.compareTo(y);
  }

  private static boolean isNumber(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch < '0' || ch > '9') {
        return false;
      }
    }
    return true;
  }

  private static String stripZeros(String s) {
    int i = 0;
    while (i < s.length() - 1 && s.charAt(i) == '0') {
      i++;
    }
    return s.substring(i);
  }

  @Override
  public String toString() {
    return value;
  }
}
