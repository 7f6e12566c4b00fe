package io.atoll.core;

/**
 * The rules the config decoder applies to text, in one place, so that every value the model
 * accepts is one the decoder reads back equal: a string is stored as its UTF-8 bytes with a
 * bounded byte length (not a char count), and only strings that survive UTF-8 unchanged (no
 * unpaired surrogate) are accepted.
 */
final class Texts {

  private Texts() {}

  /**
   * The number of bytes of {@code s} in UTF-8, or -1 if {@code s} holds an unpaired surrogate
   * (which UTF-8 cannot carry: it would be read back as '?').
   */
  static int utf8Length(String s) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)) {
        if (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return -1;
        }
        i++;
        n += 4;
      } else if (Character.isLowSurrogate(c)) {
        return -1;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /**
   * Checks a text field against the decoder's rules: not blank, valid UTF-16, at most
   * {@code maxBytes} bytes of UTF-8.
   *
   * @throws IllegalArgumentException naming the field, what it got and what is expected
   */
  static void check(String field, String value, int maxBytes, String expected) {
    if (value.isBlank()) {
      throw new IllegalArgumentException(field + ": blank (expected: " + expected + ")");
    }
    int bytes = utf8Length(value);
    if (bytes < 0) {
      throw new IllegalArgumentException(field + ": holds an unpaired surrogate, which UTF-8 cannot carry"
          + " (expected: " + expected + ")");
    }
    if (bytes > maxBytes) {
      throw new IllegalArgumentException(field + ": " + bytes + " bytes of UTF-8 in '"
          + (value.length() > 40 ? value.substring(0, 40) + "..." : value) + "' (expected: " + expected
          + ", at most " + maxBytes + " bytes of UTF-8)");
    }
  }
}
