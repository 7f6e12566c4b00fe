package io.atoll.kv.internal.command;

/**
 * Redis' glob-style matching ({@code *}, {@code ?}, {@code [a-z]}, {@code [^x]}, {@code \}), bytes. Pure.
 *
 * <p>Every token but {@code *} matches exactly one byte, so a mismatch only ever needs to retry
 * from the last {@code *} one byte further on: time is O(pattern × subject) whatever the pattern,
 * as Redis' own matcher is since it bounded its backtracking (a pattern such as
 * {@code *a*a*a*a*a*a*a*b} took exponential time with naive recursion).
 */
final class Glob {
  private Glob() {}

  static boolean matches(byte[] p, byte[] s) {
    int pi = 0;
    int si = 0;
    int starP = -1; // the pattern index just after the last '*' seen
    int starS = 0; // where in the subject that '*' currently ends
    while (si < s.length) {
      if (pi < p.length && p[pi] == '*') {
        while (pi < p.length && p[pi] == '*') {
          pi++;
        }
        if (pi == p.length) {
          return true;
        }
        starP = pi;
        starS = si;
        continue;
      }
      int next = pi < p.length ? matchOne(p, pi, s[si]) : -1;
      if (next >= 0) {
        pi = next;
        si++;
      } else if (starP >= 0) {
        pi = starP;
        si = ++starS;
      } else {
        return false;
      }
    }
    while (pi < p.length && p[pi] == '*') {
      pi++;
    }
    return pi >= p.length;
  }

  /** If the one-byte token at {@code pi} matches {@code b}: the index after the token, else -1. */
  private static int matchOne(byte[] p, int pi, byte b) {
    switch (p[pi]) {
      case '?' -> {
        return pi + 1;
      }
      case '[' -> {
        pi++;
        boolean not = pi < p.length && p[pi] == '^';
        if (not) {
          pi++;
        }
        boolean found = false;
        while (pi < p.length && p[pi] != ']') {
          if (p[pi] == '\\' && pi + 1 < p.length) {
            pi++;
            found |= p[pi] == b;
          } else if (pi + 2 < p.length && p[pi + 1] == '-') {
            int lo = p[pi] & 0xFF;
            int hi = p[pi + 2] & 0xFF;
            if (lo > hi) {
              int t = lo;
              lo = hi;
              hi = t;
            }
            int x = b & 0xFF;
            found |= x >= lo && x <= hi;
            pi += 2;
          } else {
            found |= p[pi] == b;
          }
          pi++;
        }
        // an unclosed class runs to the end of the pattern, as in Redis
        return found != not ? Math.min(pi + 1, p.length) : -1;
      }
      case '\\' -> {
        if (pi + 1 < p.length) {
          return p[pi + 1] == b ? pi + 2 : -1;
        }
        return b == '\\' ? pi + 1 : -1;
      }
      default -> {
        return p[pi] == b ? pi + 1 : -1;
      }
    }
  }
}
