package io.atoll.kv.internal.resp;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;

/** Redis' number parsing and formatting rules for arguments and replies. Pure. */
public final class Numbers {
  private Numbers() {}

  /** The integer {@code b} spells as Redis' string2ll reads it, or null if it is not one. */
  public static Long parseLong(byte[] b) {
    if (b.length == 0 || b.length > 20) {
      return null;
    }
    if (b.length > 1 && b[0] == '0') {
      return null;
    }
    try {
      String s = new String(b, StandardCharsets.US_ASCII);
      if (s.startsWith("+") || (s.startsWith("-0"))) {
        return null;
      }
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The double {@code b} spells (no spaces, finite or inf), or null. */
  public static Double parseDouble(byte[] b) {
    if (b.length == 0 || b.length > 5120) {
      return null;
    }
    String s = new String(b, StandardCharsets.US_ASCII);
    if (Character.isWhitespace(s.charAt(0)) || Character.isWhitespace(s.charAt(s.length() - 1))) {
      return null;
    }
    switch (s.toLowerCase(java.util.Locale.ROOT)) {
      case "inf", "+inf", "infinity", "+infinity" -> {
        return Double.POSITIVE_INFINITY;
      }
      case "-inf", "-infinity" -> {
        return Double.NEGATIVE_INFINITY;
      }
      default -> { }
    }
    try {
      double d = Double.parseDouble(s);
      return Double.isNaN(d) || s.endsWith("d") || s.endsWith("D") || s.endsWith("f") || s.endsWith("F")
          ? null : d;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** A double as INCRBYFLOAT prints it: plain decimal, no exponent, no trailing zeros. */
  public static String format(double d) {
    if (Double.isInfinite(d)) {
      return d > 0 ? "inf" : "-inf";
    }
    if (d == Math.rint(d) && Math.abs(d) < 1e17) {
      return Long.toString((long) d);
    }
    // The shortest decimal that reads back as the same double (Redis prints its long double
    // with 17 digits and trims zeros; for doubles this gives the same text, e.g. 10.1 not 10.0999...).
    return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
  }

  /**
   * INCRBYFLOAT's sum of two numbers that {@link #parseDouble} accepted and that are finite, as
   * Redis prints it: Redis adds in long double and prints 17 decimals with trailing zeros cut, so
   * 0.1 + 0.2 is "0.3", not the double's 0.30000000000000004. Adding the decimals exactly and
   * rounding to 17 decimals gives the same text. Null if the sum is out of the double range.
   */
  public static String addFloats(byte[] a, double av, byte[] b, double bv) {
    BigDecimal sum = decimal(a, av).add(decimal(b, bv));
    if (Double.isInfinite(sum.doubleValue())) {
      return null;
    }
    if (sum.scale() > 17) {
      sum = sum.setScale(17, java.math.RoundingMode.HALF_EVEN);
    }
    return sum.signum() == 0 ? "0" : sum.stripTrailingZeros().toPlainString();
  }

  private static BigDecimal decimal(byte[] text, double value) {
    if (text == null) {
      return BigDecimal.ZERO;
    }
    try {
      BigDecimal d = new BigDecimal(new String(text, StandardCharsets.US_ASCII)); // exact for decimal text
      if (Math.abs(d.scale()) <= 1100) {
        return d;
      }
      // "1e-2000000000" is 0.0 as a double; exactly it would need a 2-billion-digit sum
    } catch (NumberFormatException e) {
      // hex and other forms Double reads but BigDecimal does not
    }
    return new BigDecimal(value); // a double's exact value: scale within 1074
  }

  /** The ASCII bytes of a long. */
  public static byte[] bytes(long v) {
    return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
  }
}
