package io.atoll.bench.sidebyside;

import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a load generator: scenario names, then {@code --runs N}, {@code --seconds N},
 * {@code --warmup N} and {@code --idle N} (counters activated by idle-heap) in any order. Not API.
 *
 * @param scenarios the scenarios to run, in order (the defaults when none is named)
 * @param runs runs of each scenario, from fresh processes
 * @param seconds seconds measured per run
 * @param warmup seconds of warm-up before measuring
 * @param idle counters idle-heap activates
 */
public record BenchArgs(List<String> scenarios, int runs, int seconds, int warmup, int idle) {

  /** Checks the ranges. @throws IllegalArgumentException if one is out of range */
  public BenchArgs {
    scenarios = List.copyOf(scenarios);
    check("--runs", runs, 1, 100);
    check("--seconds", seconds, 1, 3600);
    check("--warmup", warmup, 0, 3600);
    check("--idle", idle, 1, 10_000_000);
  }

  private static void check(String name, int v, int min, int max) {
    if (v < min || v > max) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: " + min + " to " + max + ")");
    }
  }

  /**
   * Parses {@code args}; {@code defaults} are the scenarios when none is named.
   *
   * @throws IllegalArgumentException for an option without a number, or out of range
   */
  public static BenchArgs parse(String[] args, List<String> defaults) {
    List<String> scenarios = new ArrayList<>();
    int runs = 3;
    int seconds = 10;
    int warmup = 5;
    int idle = 200_000;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--runs" -> runs = number(args, ++i);
        case "--seconds" -> seconds = number(args, ++i);
        case "--warmup" -> warmup = number(args, ++i);
        case "--idle" -> idle = number(args, ++i);
        default -> {
          if (args[i].startsWith("--")) {
            throw new IllegalArgumentException("option: " + args[i] + " (expected: --runs, --seconds, --warmup, --idle)");
          }
          scenarios.add(args[i]);
        }
      }
    }
    return new BenchArgs(scenarios.isEmpty() ? defaults : scenarios, runs, seconds, warmup, idle);
  }

  private static int number(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException(args[i - 1] + ": missing (expected: a number after it)");
    }
    try {
      return Integer.parseInt(args[i]);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(args[i - 1] + ": '" + args[i] + "' (expected: a whole number)", e);
    }
  }
}
