package io.atoll.server.chaos;

import java.io.PrintStream;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Per fault kind: how many were injected, the longest unavailability (of a shard, or of a key) and
 * recovery. Not thread-safe.
 */
final class FaultStats<K extends Enum<K>> {

  private record Row(int count, long maxUnavailableMillis, long maxRecoveryMillis, int unrecovered) {}

  private final Map<K, Row> rows;
  private final Function<K, String> label;
  private long baselineMillis = -1;

  FaultStats(Class<K> kinds, Function<K, String> label) {
    this.rows = new EnumMap<>(kinds);
    this.label = label;
  }

  void baseline(long gapMillis) {
    baselineMillis = gapMillis;
  }

  /** One fault: the longest shard gap in its window, how long recovery took, or -1 if it did not recover. */
  void add(K kind, long unavailableMillis, long recoveryMillis) {
    Row r = rows.getOrDefault(kind, new Row(0, 0, 0, 0));
    rows.put(kind, new Row(r.count() + 1, Math.max(r.maxUnavailableMillis(), unavailableMillis),
        Math.max(r.maxRecoveryMillis(), recoveryMillis), r.unrecovered() + (recoveryMillis < 0 ? 1 : 0)));
  }

  int total() {
    return rows.values().stream().mapToInt(Row::count).sum();
  }

  int unrecovered() {
    return rows.values().stream().mapToInt(Row::unrecovered).sum();
  }

  void print(PrintStream out) {
    out.println();
    out.println("== faults ==");
    out.printf("%-18s %8s %24s %22s%n", "kind", "injected", "longest unavailable (ms)", "longest recovery (ms)");
    if (baselineMillis >= 0) {
      out.printf("%-18s %8s %24d %22s%n", "(none: baseline)", "-", baselineMillis, "-");
    }
    for (Map.Entry<K, Row> e : rows.entrySet()) {
      Row r = e.getValue();
      out.printf("%-18s %8d %24d %22s%n", label.apply(e.getKey()), r.count(), r.maxUnavailableMillis(),
          r.maxRecoveryMillis() + (r.unrecovered() > 0 ? " (" + r.unrecovered() + " did not recover)" : ""));
    }
    out.printf("%-18s %8d%n", "total", total());
  }
}
