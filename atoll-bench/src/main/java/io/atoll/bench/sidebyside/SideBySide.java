package io.atoll.bench.sidebyside;

import io.atoll.bench.cluster.ClusterBench;
import io.atoll.bench.pekko.PekkoBench;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The one command behind the side-by-side table of docs/benchmarks.md: per pair, the loopback
 * floor, then Atoll's load generator, then Pekko's, each in a fresh JVM (A B A B ...), then the
 * table rewritten from the pairs (medians, min–max, Atoll's advantage per pair).
 *
 * <pre>
 * atoll-bench/side-by-side.sh [--pairs 3] [--seconds 3] [--warmup 2] [--idle 100000] [--doc docs/benchmarks.md]
 * </pre>
 *
 * Public for the command line; not API.
 */
public final class SideBySide {

  /** The figures compared, in table order. */
  public static final List<Figure> FIGURES = List.of(
      new Figure("local tell, handled per second", "local-tell", "msg/s", true, 3, "/s"),
      new Figure("local tell, on the pod's shared drains only", "local-tell-shared-drains", "local-tell",
          "msg/s", true, 0, "/s"),
      new Figure("local tell, each entity a thread of its own (Atoll's default)", "local-tell-own-threads", "local-tell",
          "msg/s", true, 0, "/s"),
      new Figure("local ask, 64 in flight", "local-ask-64", "msg/s", true, 3, "/s"),
      new Figure("local ask, 64 in flight, on the pod's shared drains only", "local-ask-64-shared-drains",
          "local-ask-64", "msg/s", true, 0, "/s"),
      new Figure("local ask, 64 in flight, each entity a thread of its own", "local-ask-64-own-threads",
          "local-ask-64", "msg/s", true, 0, "/s"),
      new Figure("local ask p50, caller on a platform thread", "local-ask-1", "p50_us", false, 3, "µs"),
      new Figure("local ask p50, platform thread, on the pod's shared drains only", "local-ask-1-shared-drains",
          "local-ask-1", "p50_us", false, 0, "µs"),
      new Figure("local ask p50, caller on a virtual thread", "local-ask-1-vt", "p50_us", false, 0, "µs"),
      new Figure("remote ask, 64 in flight", "remote-ask-64", "msg/s", true, 5, "/s"),
      new Figure("remote tell, handled per second", "remote-tell", "msg/s", true, 4, "/s"),
      new Figure("remote ask p50, 1 in flight", "remote-ask-1", "p50_us", false, 0, "µs"),
      new Figure("remote ask p99, 1 in flight", "remote-ask-1", "p99_us", false, 0, "µs"),
      new Figure("idle heap per entity", "idle-heap", "bytes/entity", false, 8, "B"),
      new Figure("third pod joins two: seconds to balanced", "join", "balanced_after_s", false, 50, "s"));

  /** The scenarios Pekko's load generator runs, in the order it runs them. */
  public static final List<String> SCENARIOS = List.of("local-tell", "local-ask-64", "local-ask-1",
      "local-ask-1-vt", "remote-ask-64", "remote-tell", "remote-ask-1", "idle-heap", "join");

  /**
   * The scenarios Atoll's runs: the same (the counters declare inline local sends), and the local
   * figures once more with the counters on the pod's shared drains only and on a thread of their
   * own each (Pekko has no such variants: their rows compare with Pekko's one figure).
   */
  public static final List<String> ATOLL_SCENARIOS = List.of("local-tell", "local-tell-shared-drains",
      "local-tell-own-threads", "local-ask-64", "local-ask-64-shared-drains", "local-ask-64-own-threads",
      "local-ask-1", "local-ask-1-shared-drains", "local-ask-1-vt", "remote-ask-64", "remote-tell", "remote-ask-1",
      "idle-heap", "join");

  private SideBySide() {}

  /** The command's options. @param pairs A B pairs @param seconds measured @param warmup warm-up @param idle idle counters @param doc the document to rewrite */
  record Options(int pairs, int seconds, int warmup, int idle, Path doc) {
    Options {
      if (pairs < 1 || pairs > 20) {
        throw new IllegalArgumentException("--pairs: " + pairs + " (expected: 1 to 20)");
      }
      new BenchArgs(List.of(), 1, seconds, warmup, idle); // the same ranges as the load generators
    }

    static Options parse(String[] args) {
      int pairs = 3;
      Path doc = Path.of("docs/benchmarks.md");
      List<String> rest = new ArrayList<>(List.of("--seconds", "3", "--warmup", "2", "--idle", "100000"));
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--pairs" -> pairs = Integer.parseInt(value(args, ++i));
          case "--doc" -> doc = Path.of(value(args, ++i));
          case "--seconds", "--warmup", "--idle" -> {
            rest.add(args[i]);
            rest.add(value(args, ++i));
          }
          default -> throw new IllegalArgumentException("option: " + args[i]
              + " (expected: --pairs, --seconds, --warmup, --idle, --doc)");
        }
      }
      BenchArgs b = BenchArgs.parse(rest.toArray(String[]::new), List.of("all"));
      return new Options(pairs, b.seconds(), b.warmup(), b.idle(), doc);
    }

    private static String value(String[] args, int i) {
      if (i >= args.length) {
        throw new IllegalArgumentException(args[i - 1] + ": missing (expected: a value after it)");
      }
      return args[i];
    }

    List<String> benchArgs(List<String> scenarios) {
      List<String> a = new ArrayList<>(scenarios);
      a.addAll(List.of("--runs", "1", "--seconds", "" + seconds, "--warmup", "" + warmup, "--idle", "" + idle));
      return a;
    }
  }

  /** Runs the pairs and rewrites the table. */
  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    if (!Files.isRegularFile(o.doc())) {
      throw new IllegalArgumentException("--doc: " + o.doc() + " (expected: an existing file, e.g. run from the repository root)");
    }
    Instant started = Instant.now();
    String loadBefore = loadAverage();
    List<SideBySideTable.Pair> pairs = new ArrayList<>();
    for (int i = 1; i <= o.pairs(); i++) {
      System.out.printf("== pair %d of %d: floor%n", i, o.pairs());
      Map<String, Double> floor = child(LoopbackFloor.class.getName(),
          List.of("--seconds", "" + Math.min(o.seconds(), 3), "--warmup", "" + Math.min(o.warmup(), 2)));
      System.out.printf("== pair %d of %d: Atoll%n", i, o.pairs());
      Map<String, Double> atoll = child(ClusterBench.class.getName(), o.benchArgs(ATOLL_SCENARIOS));
      System.out.printf("== pair %d of %d: Pekko%n", i, o.pairs());
      Map<String, Double> pekko = child(PekkoBench.class.getName(), o.benchArgs(SCENARIOS));
      pairs.add(new SideBySideTable.Pair(atoll, pekko, floor));
    }
    String block = block(o, pairs, started, loadBefore, loadAverage());
    System.out.println(block);
    String doc = Files.readString(o.doc());
    Files.writeString(o.doc(), SideBySideTable.rewrite(doc, block));
    System.out.println("rewrote the table in " + o.doc());
    System.exit(0);
  }

  static String block(Options o, List<SideBySideTable.Pair> pairs, Instant started, String loadBefore,
      String loadAfter) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "Run of %s (UTC), commit %s, %d pairs (Atoll, then Pekko, each in a fresh JVM), "
        + "%d s measured after %d s of warm-up per scenario, %,d idle entities. Load average (1, 5, 15 min) %s at the start, "
        + "%s at the end.%n%n", started.truncatedTo(ChronoUnit.MINUTES), commit(), pairs.size(), o.seconds(), o.warmup(),
        o.idle(), loadBefore, loadAfter));
    b.append(SideBySideTable.table(FIGURES, pairs));
    b.append(SideBySideTable.floorRow("remote ask p50 ÷ bare TCP round trip p50", "remote-ask-1 p50_us",
        "floor-tcp p50_us", 3, pairs));
    b.append(SideBySideTable.floorRow("remote ask p50 ÷ TCP round trip p50, both ends spinning", "remote-ask-1 p50_us",
        "floor-tcp-spin p50_us", 0, pairs));
    b.append(SideBySideTable.floorRow("remote ask p50 ÷ bare gRPC unary p50", "remote-ask-1 p50_us",
        "floor-grpc p50_us", 0, pairs));
    b.append(SideBySideTable.floorValue("floor: bare TCP ping-pong p50", "floor-tcp p50_us", pairs));
    b.append(SideBySideTable.floorValue("floor: TCP ping-pong p50, both ends spinning", "floor-tcp-spin p50_us", pairs));
    b.append(SideBySideTable.floorValue("floor: bare gRPC unary p50", "floor-grpc p50_us", pairs));
    b.append("\nFailed messages while the third pod joined, per pair: Atoll ");
    b.append(joined(pairs, true)).append("; Pekko ").append(joined(pairs, false)).append(".\n");
    return b.toString();
  }

  private static String joined(List<SideBySideTable.Pair> pairs, boolean atoll) {
    List<String> out = new ArrayList<>();
    for (SideBySideTable.Pair p : pairs) {
      Map<String, Double> m = atoll ? p.atoll() : p.pekko();
      out.add(String.format(Locale.ROOT, "%,.0f of %,.0f", m.getOrDefault("join failed", -1.0),
          m.getOrDefault("join messages", -1.0)));
    }
    return String.join(", ", out);
  }

  /** Runs {@code mainClass} in a fresh JVM with this one's class path; its result lines. */
  private static Map<String, Double> child(String mainClass, List<String> args) throws IOException,
      InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(List.of("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), mainClass));
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    Map<String, Double> results = new LinkedHashMap<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        Optional<Results.Line> l = Results.parse(line);
        if (l.isPresent()) {
          results.put(l.get().scenario() + " " + l.get().key(), l.get().value());
        } else {
          System.out.println("  | " + line);
        }
      }
    }
    int exit = p.waitFor();
    if (exit != 0) {
      throw new IllegalStateException(mainClass + " exited with " + exit + " (expected: 0)");
    }
    return results;
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + ", " + f[1] + ", " + f[2];
    } catch (IOException e) {
      return "unknown";
    }
  }

  private static String commit() {
    try {
      Process p = new ProcessBuilder("git", "rev-parse", "--short", "HEAD").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      return p.waitFor() == 0 ? out : "unknown";
    } catch (IOException e) {
      return "unknown";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }
}
