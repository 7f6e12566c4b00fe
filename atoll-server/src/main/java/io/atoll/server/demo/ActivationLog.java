package io.atoll.server.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the activation log the accounts write to their database ({@link AccountDb}) and looks for
 * two activations of one account live at the same time, same fencing token or not. An activation
 * is live from its start (before it claims its row) to the end of the last handler that wrote
 * (applied or refused by the token) or of its graceful stop, whichever is later. Two activations
 * overlap when one starts while an older one is still live.
 *
 * <p>One overlap no code can prevent is excused, and counted apart: a process frozen (SIGSTOP)
 * in the middle of a handler, whose lease ran out meanwhile, finishes that handler when it is
 * thawed, while a newer activation runs elsewhere. The fencing token is what protects the data
 * then (its write is refused). It is excused only if the older activation's pod was frozen during
 * the overlap and none of the older activation's handlers started after the newer one did.
 */
public final class ActivationLog {

  /** When a pod's process was frozen, for the excuse above. */
  @FunctionalInterface
  public interface Freezes {
    /** Nothing was ever frozen. */
    Freezes NONE = (pod, from, to) -> false;

    /**
     * Whether the process of {@code pod} (as the log names it) was frozen at some moment between
     * {@code fromMicros} and {@code toMicros}.
     */
    boolean frozenDuring(String pod, long fromMicros, long toMicros);
  }

  /**
   * An activation as logged.
   *
   * @param id its id in the log
   * @param account the account
   * @param pod the pod it ran in
   * @param epoch its fencing token's epoch
   * @param started when it started (microseconds)
   * @param lastEnd when its last write or its stop ended (microseconds)
   */
  public record Activation(long id, String account, String pod, long epoch, long started, long lastEnd) {}

  /**
   * {@code newer} started while {@code older} was live.
   *
   * @param older the activation that was still live
   * @param newer the one that started meanwhile
   * @param excused whether it is the frozen-process case the class comment describes
   */
  public record Overlap(Activation older, Activation newer, boolean excused) {
    /** One line for a report. */
    public String describe() {
      return String.format("account %s: activation %d on %s (epoch %d) live until %d, activation %d on %s"
              + " (epoch %d) started at %d, %.1f ms before%s", older.account(), older.id(), older.pod(),
          older.epoch(), older.lastEnd(), newer.id(), newer.pod(), newer.epoch(), newer.started(),
          (older.lastEnd() - newer.started()) / 1000.0, excused ? " (excused: its pod was frozen mid-handler)" : "");
    }
  }

  /**
   * What the check found.
   *
   * @param activations activations in the log
   * @param overlaps every overlap, excused or not
   */
  public record Result(long activations, List<Overlap> overlaps) {
    /** Overlaps that are not excused: two live instances. */
    public long overlapping() {
      return overlaps.stream().filter(o -> !o.excused()).count();
    }

    /** Overlaps excused as a frozen process finishing a handler. */
    public long excused() {
      return overlaps.stream().filter(Overlap::excused).count();
    }
  }

  private ActivationLog() {}

  /** Checks the log in the database at {@code url}. */
  public static Result check(String url, Freezes freezes) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "sa", "")) {
      Map<Long, Long> lastWrite = lastWrites(c);
      List<Overlap> overlaps = new ArrayList<>();
      long count = 0;
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
          "SELECT id, account, pod, epoch, started, ended FROM activations ORDER BY account, started, id")) {
        Activation live = null;
        while (rs.next()) {
          count++;
          long id = rs.getLong(1);
          long started = rs.getLong(5);
          long end = Math.max(started, Math.max(rs.getLong(6), lastWrite.getOrDefault(id, 0L)));
          Activation a = new Activation(id, rs.getString(2), rs.getString(3), rs.getLong(4), started, end);
          if (live != null && !live.account().equals(a.account())) {
            live = null;
          }
          if (live != null && live.lastEnd() > a.started()) {
            overlaps.add(new Overlap(live, a, excused(c, live, a, freezes)));
          }
          if (live == null || a.lastEnd() > live.lastEnd()) {
            live = a;
          }
        }
      }
      return new Result(count, List.copyOf(overlaps));
    }
  }

  private static Map<Long, Long> lastWrites(Connection c) throws SQLException {
    Map<Long, Long> out = new HashMap<>();
    for (String sql : List.of("SELECT activation, MAX(ended) FROM ops WHERE activation IS NOT NULL GROUP BY activation",
        "SELECT activation, MAX(ended) FROM stale_writes WHERE activation IS NOT NULL GROUP BY activation")) {
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
        while (rs.next()) {
          out.merge(rs.getLong(1), rs.getLong(2), Math::max);
        }
      }
    }
    return out;
  }

  private static boolean excused(Connection c, Activation older, Activation newer, Freezes freezes)
      throws SQLException {
    if (!freezes.frozenDuring(older.pod(), newer.started(), older.lastEnd())) {
      return false;
    }
    for (String table : List.of("ops", "stale_writes")) {
      try (PreparedStatement q = c.prepareStatement(
          "SELECT COUNT(*) FROM " + table + " WHERE activation = ? AND started >= ?")) {
        q.setLong(1, older.id());
        q.setLong(2, newer.started());
        try (ResultSet rs = q.executeQuery()) {
          rs.next();
          if (rs.getLong(1) > 0) {
            return false; // a handler of the older one started after the newer one did
          }
        }
      }
    }
    return true;
  }
}
