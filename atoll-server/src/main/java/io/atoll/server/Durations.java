package io.atoll.server;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** Reads durations written as {@code 500ms}, {@code 3s}, {@code 2m}, {@code 1h} or ISO-8601 {@code PT3S}. */
public final class Durations implements CommandLine.ITypeConverter<Duration> {

  private static final Pattern SIMPLE = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  /**
   * Parses a duration.
   *
   * @throws CommandLine.TypeConversionException naming the text and the expected form
   */
  public static Duration parse(String value) {
    String v = value.trim();
    Matcher m = SIMPLE.matcher(v);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofHours(n);
      };
    }
    try {
      return Duration.parse(v);
    } catch (DateTimeParseException e) {
      throw new CommandLine.TypeConversionException("'" + value
          + "' is not a duration (expected: a number with ms, s, m or h, e.g. 500ms or 3s)");
    }
  }

  /** Writes a duration the way {@link #parse} reads it. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
  }
}
