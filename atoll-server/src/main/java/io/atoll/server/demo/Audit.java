package io.atoll.server.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Checks the ledger against the database after a run: every acknowledged deposit must be there,
 * each account's balance must equal the sum of its deposits, and no stale activation may have
 * acted after a newer one started.
 *
 * @param sent deposits sent
 * @param acknowledged deposits acknowledged
 * @param unacknowledged deposits that failed or timed out (their fate may be either)
 * @param lost acknowledged deposits missing from the database
 * @param appliedUnacknowledged deposits in the database that were never acknowledged
 * @param appliedRefused deposits refused as OVERLOADED (a promise that no handler saw them) that
 *     are in the database all the same
 * @param duplicateActivations handlers of an older activation that started after a newer activation
 *     of the same account had started: two live instances
 * @param fencedWrites writes refused by the fencing token (all, including handlers that were
 *     already running when a newer activation started, e.g. in a frozen process)
 * @param duplicateDeposits deposits delivered twice (refused by their op id)
 * @param unbalancedAccounts accounts whose balance differs from the sum of their deposits
 * @param activations activations recorded
 * @param staleReads balance asks that missed an acknowledged deposit
 */
public record Audit(long sent, long acknowledged, long unacknowledged, long lost, long appliedUnacknowledged,
    long appliedRefused, long duplicateActivations, long fencedWrites, long duplicateDeposits, long unbalancedAccounts, long activations,
    long staleReads) {

  /** Whether the run kept every promise. */
  public boolean ok() {
    return lost == 0 && appliedRefused == 0 && duplicateActivations == 0 && duplicateDeposits == 0 && unbalancedAccounts == 0
        && staleReads == 0;
  }

  /** Audits {@code ledger} against the database at {@code url}. */
  public static Audit of(Ledger ledger, String url) throws SQLException {
    Set<Long> stored = new HashSet<>();
    long stale;
    long fenced;
    long dupDeposits;
    long unbalanced;
    long activations;
    try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT op_id FROM ops")) {
        while (rs.next()) {
          stored.add(rs.getLong(1));
        }
      }
      fenced = count(s, "SELECT COUNT(*) FROM stale_writes");
      stale = count(s, "SELECT COUNT(*) FROM stale_writes w WHERE w.started > (SELECT MIN(a.started) FROM"
          + " activations a WHERE a.account = w.account AND a.epoch = w.newer_epoch)");
      dupDeposits = count(s, "SELECT COUNT(*) FROM duplicate_ops");
      activations = count(s, "SELECT COUNT(*) FROM activations");
      unbalanced = unbalanced(s);
    }
    long lost = 0;
    for (long op : ledger.ackedOps()) {
      if (!stored.contains(op)) {
        lost++;
      }
    }
    long appliedUnacked = 0;
    long appliedRefused = 0;
    for (long op : stored) {
      if (!ledger.ackedOps().contains(op)) {
        appliedUnacked++;
      }
      if (ledger.refusedOps().contains(op)) {
        appliedRefused++;
      }
    }
    return new Audit(ledger.sentCount(), ledger.ackedCount(), ledger.failedCount(), lost, appliedUnacked,
        appliedRefused, stale,
        fenced, dupDeposits, unbalanced, activations, ledger.staleReads());
  }

  /** The refused writes, one line each, for failure reports. */
  public static String fencedWritesReport(String url) throws SQLException {
    StringBuilder b = new StringBuilder();
    try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT w.account, w.pod, w.epoch, w.newer_epoch, w.what, w.started,"
            + " (SELECT MIN(a.started) FROM activations a WHERE a.account = w.account AND a.epoch = w.newer_epoch)"
            + " FROM stale_writes w")) {
      while (rs.next()) {
        b.append(String.format("%s by %s at epoch %d (newer %d) %s started %d, newer activation started %d%n",
            rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getString(5), rs.getLong(6),
            rs.getLong(7)));
      }
    }
    return b.toString();
  }

  /**
   * Accounts whose balance is not the sum of their deposits. Summed here, not by a join in SQL:
   * H2 joins accounts with ops by scanning every op per account, minutes for a long run.
   */
  private static long unbalanced(Statement s) throws SQLException {
    Map<String, Long> sums = new HashMap<>();
    try (ResultSet rs = s.executeQuery("SELECT account, SUM(amount) FROM ops GROUP BY account")) {
      while (rs.next()) {
        sums.put(rs.getString(1), rs.getLong(2));
      }
    }
    long unbalanced = 0;
    try (ResultSet rs = s.executeQuery("SELECT id, balance FROM accounts")) {
      while (rs.next()) {
        if (rs.getLong(2) != sums.getOrDefault(rs.getString(1), 0L)) {
          unbalanced++;
        }
      }
    }
    return unbalanced;
  }

  private static long count(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
