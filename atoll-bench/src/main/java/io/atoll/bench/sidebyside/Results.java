package io.atoll.bench.sidebyside;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The figures a benchmark process reports, and the line format that carries them to
 * {@link SideBySide}: {@code RESULT <scenario> <key>=<value>}, one line per figure, keys without
 * spaces. Pure functions; public for the load generators. Not API.
 */
public final class Results {

  /** The prefix of a result line. */
  public static final String PREFIX = "RESULT ";

  private Results() {}

  /** A parsed result line. @param scenario its scenario @param key the figure @param value its value */
  public record Line(String scenario, String key, double value) {}

  /** The result lines for {@code figures} of {@code scenario}. */
  public static List<String> lines(String scenario, Map<String, Double> figures) {
    List<String> out = new ArrayList<>();
    figures.forEach((k, v) -> out.add(PREFIX + scenario + " " + k.replace(' ', '_') + "="
        + String.format(Locale.ROOT, "%.3f", v)));
    return out;
  }

  /** Prints the result lines of {@code figures}. */
  public static void emit(String scenario, Map<String, Double> figures) {
    for (String l : lines(scenario, figures)) {
      System.out.println(l);
    }
    System.out.flush();
  }

  /**
   * The figure on {@code line}, if it is a result line; empty for any other output.
   *
   * @throws IllegalArgumentException if it starts like a result line but is not one
   */
  public static Optional<Line> parse(String line) {
    if (!line.startsWith(PREFIX)) {
      return Optional.empty();
    }
    String[] parts = line.substring(PREFIX.length()).trim().split(" ");
    int eq = parts.length == 2 ? parts[1].indexOf('=') : -1;
    if (eq <= 0) {
      throw new IllegalArgumentException("result line: '" + line + "' (expected: RESULT <scenario> <key>=<value>)");
    }
    try {
      return Optional.of(new Line(parts[0], parts[1].substring(0, eq), Double.parseDouble(parts[1].substring(eq + 1))));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("result line: '" + line + "' (expected: a number after '=')", e);
    }
  }

  /** p50 and p99 of latencies in nanoseconds, in microseconds, and the sample count. Sorts {@code samples}. */
  public static Map<String, Double> percentiles(long[] samples) {
    if (samples.length == 0) {
      throw new IllegalArgumentException("samples: 0 (expected: at least 1)");
    }
    Arrays.sort(samples);
    Map<String, Double> r = new LinkedHashMap<>();
    r.put("p50 us", samples[samples.length / 2] / 1000.0);
    r.put("p99 us", samples[(int) (samples.length * 0.99)] / 1000.0);
    r.put("samples", (double) samples.length);
    return r;
  }

  /**
   * The median of {@code values}: the middle one, or the mean of the two middle ones for an even
   * count.
   *
   * @throws IllegalArgumentException if there are none
   */
  public static double median(double... values) {
    if (values.length == 0) {
      throw new IllegalArgumentException("values: 0 (expected: at least 1)");
    }
    double[] v = values.clone();
    Arrays.sort(v);
    int m = v.length / 2;
    return v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
  }

  /** The median per key of several runs' figures (keys of the first run). */
  public static Map<String, Double> median(List<Map<String, Double>> runs) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String k : runs.get(0).keySet()) {
      out.put(k, median(runs.stream().mapToDouble(m -> m.get(k)).toArray()));
    }
    return out;
  }

  /** Figures as one readable line. */
  public static String format(Map<String, Double> m) {
    StringBuilder b = new StringBuilder();
    m.forEach((k, v) -> b.append(String.format(Locale.ROOT, "%s %,.1f  ", k, v)));
    return b.toString().trim();
  }
}
