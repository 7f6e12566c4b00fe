package io.atoll.server.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
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
 * @param duplicateActivations writes or activations refused because a newer activation of the
 *     same account existed: evidence of two live instances
 * @param duplicateDeposits deposits delivered twice (refused by their op id)
 * @param unbalancedAccounts accounts whose balance differs from the sum of their deposits
 * @param activations activations recorded
 * @param staleReads balance asks that missed an acknowledged deposit
 */
public record Audit(long sent, long acknowledged, long unacknowledged, long lost, long appliedUnacknowledged,
    long duplicateActivations, long duplicateDeposits, long unbalancedAccounts, long activations, long staleReads) {

  /** Whether the run kept every promise. */
  public boolean ok() {
    return lost == 0 && duplicateActivations == 0 && unbalancedAccounts == 0 && staleReads == 0;
  }

  /** Audits {@code ledger} against the database at {@code url}. */
  public static Audit of(Ledger ledger, String url) throws SQLException {
    Set<Long> stored = new HashSet<>();
    long stale;
    long dupDeposits;
    long unbalanced;
    long activations;
    try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT op_id FROM ops")) {
        while (rs.next()) {
          stored.add(rs.getLong(1));
        }
      }
      stale = count(s, "SELECT COUNT(*) FROM stale_writes");
      dupDeposits = count(s, "SELECT COUNT(*) FROM duplicate_ops");
      activations = count(s, "SELECT COUNT(*) FROM activations");
      unbalanced = count(s, "SELECT COUNT(*) FROM (SELECT a.id FROM accounts a LEFT JOIN ops o ON o.account = a.id"
          + " GROUP BY a.id, a.balance HAVING a.balance <> COALESCE(SUM(o.amount), 0)) x");
    }
    long lost = 0;
    for (long op : ledger.ackedOps()) {
      if (!stored.contains(op)) {
        lost++;
      }
    }
    long appliedUnacked = 0;
    for (long op : stored) {
      if (!ledger.ackedOps().contains(op)) {
        appliedUnacked++;
      }
    }
    return new Audit(ledger.sentCount(), ledger.ackedCount(), ledger.failedCount(), lost, appliedUnacked, stale,
        dupDeposits, unbalanced, activations, ledger.staleReads());
  }

  private static long count(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
