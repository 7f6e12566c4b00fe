package io.atoll.kv.internal.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** Glob matching: Redis' rules, and time bounded whatever the pattern (KEYS, SCAN MATCH, CONFIG GET). */
class GlobTest {

  private static boolean m(String pattern, String subject) {
    return Glob.matches(pattern.getBytes(StandardCharsets.ISO_8859_1), subject.getBytes(StandardCharsets.ISO_8859_1));
  }

  @Test
  void redisRules() {
    assertThat(m("*", "")).isTrue();
    assertThat(m("h?llo", "hello")).isTrue();
    assertThat(m("h*llo", "heeeello")).isTrue();
    assertThat(m("h[ae]llo", "hallo")).isTrue();
    assertThat(m("h[^e]llo", "hello")).isFalse();
    assertThat(m("h[a-b]llo", "hbllo")).isTrue();
    assertThat(m("h[b-a]llo", "hallo")).isTrue();
    assertThat(m("h\\*llo", "h*llo")).isTrue();
    assertThat(m("h\\*llo", "hello")).isFalse();
    assertThat(m("a\\", "a\\")).isTrue();
    assertThat(m("scan:*", "scan:12")).isTrue();
    assertThat(m("scan:*", "sca")).isFalse();
    assertThat(m("*x", "abc")).isFalse();
    assertThat(m("a*b*c", "aXbYbZc")).isTrue();
    assertThat(m("a[", "a")).isFalse();
    assertThat(m("a[b", "ab")).isTrue();
  }

  @Test
  void manyStarsDoNotTakeExponentialTime() {
    String subject = "a".repeat(5000);
    String pattern = "*a".repeat(40) + "*b";
    assertTimeoutPreemptively(Duration.ofSeconds(5), () -> assertThat(m(pattern, subject)).isFalse());
    assertTimeoutPreemptively(Duration.ofSeconds(5), () -> assertThat(m("*a*a*a*a*a*a*a*a*a*a*a*a*", subject)).isTrue());
  }

  @Property(tries = 2000)
  void agreesWithBacktrackingReference(@ForAll("patterns") String pattern, @ForAll("subjects") String subject) {
    assertThat(m(pattern, subject)).as("%s ~ %s", pattern, subject).isEqualTo(reference(pattern, subject));
  }

  @Provide
  Arbitrary<String> patterns() {
    return Arbitraries.strings().withChars("ab*?[]^-\\").ofMaxLength(8);
  }

  @Provide
  Arbitrary<String> subjects() {
    return Arbitraries.strings().withChars("ab-]\\*").ofMaxLength(8);
  }

  /** The plain recursive matcher (exponential on some patterns), as the oracle on small inputs. */
  private static boolean reference(String pattern, String subject) {
    return ref(pattern.getBytes(StandardCharsets.ISO_8859_1), 0, subject.getBytes(StandardCharsets.ISO_8859_1), 0);
  }

  private static boolean ref(byte[] p, int pi, byte[] s, int si) {
    while (pi < p.length) {
      byte c = p[pi];
      switch (c) {
        case '*' -> {
          for (int k = si; k <= s.length; k++) {
            if (ref(p, pi + 1, s, k)) {
              return true;
            }
          }
          return false;
        }
        case '?' -> {
          if (si >= s.length) {
            return false;
          }
          si++;
        }
        case '[' -> {
          if (si >= s.length) {
            return false;
          }
          pi++;
          boolean not = pi < p.length && p[pi] == '^';
          if (not) {
            pi++;
          }
          boolean found = false;
          while (pi < p.length && p[pi] != ']') {
            if (p[pi] == '\\' && pi + 1 < p.length) {
              pi++;
              found |= p[pi] == s[si];
            } else if (pi + 2 < p.length && p[pi + 1] == '-') {
              int lo = Math.min(p[pi] & 0xFF, p[pi + 2] & 0xFF);
              int hi = Math.max(p[pi] & 0xFF, p[pi + 2] & 0xFF);
              found |= (s[si] & 0xFF) >= lo && (s[si] & 0xFF) <= hi;
              pi += 2;
            } else {
              found |= p[pi] == s[si];
            }
            pi++;
          }
          if (found == not) {
            return false;
          }
          si++;
        }
        case '\\' -> {
          if (pi + 1 < p.length) {
            pi++;
          }
          if (si >= s.length || p[pi] != s[si]) {
            return false;
          }
          si++;
        }
        default -> {
          if (si >= s.length || c != s[si]) {
            return false;
          }
          si++;
        }
      }
      pi++;
    }
    return si == s.length;
  }
}
