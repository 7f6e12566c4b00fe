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
 * started a handler after a newer one started ({@link ActivationLog}'s late starts).
 *
 * @param sent deposits sent
 * @param acknowledged deposits acknowledged
 * @param unacknowledged deposits that failed or timed out (their fate may be either)
 * @param lost acknowledged deposits missing from the database
 * @param appliedUnacknowledged deposits in the database that were never acknowledged
 * @param appliedRefused deposits refused as OVERLOADED (a promise that no handler saw them) that
 *     are in the database all the same
 * @param duplicateActivations handlers (or factories, or claims) of an activation that started after
 *     an activation of the same account with a greater token had started, when its lease had run
 *     out, and that no freeze excuses ({@link ActivationLog.Result#lateStarts()})
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

  /** Audits {@code ledger} against the database at {@code url}, where nothing was ever frozen. */
  public static Audit of(Ledger ledger, String url) throws SQLException {
    return of(ledger, url, ActivationLog.check(url, ActivationLog.Freezes.NONE));
  }

  /** Audits {@code ledger} against the database at {@code url}, whose activation log checked as {@code log}. */
  public static Audit of(Ledger ledger, String url, ActivationLog.Result log) throws SQLException {
    Set<Long> stored = new HashSet<>();
    long fenced;
    long dupDeposits;
    long unbalanced;
    long activations;
    try (Connection c = snapshot(url); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT op_id FROM ops")) {
        while (rs.next()) {
          stored.add(rs.getLong(1));
        }
      }
      fenced = count(s, "SELECT COUNT(*) FROM stale_writes");
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
        appliedRefused, log.lateStarts(),
        fenced, dupDeposits, unbalanced, activations, ledger.staleReads());
  }

  /** The activation log's findings, one line each, for failure reports. */
  public static String fencedWritesReport(String url) throws SQLException {
    StringBuilder b = new StringBuilder();
    for (ActivationLog.Finding f : ActivationLog.check(url, ActivationLog.Freezes.NONE).findings()) {
      b.append(f.describe()).append(System.lineSeparator());
    }
    return b.toString();
  }

  /**
   * Accounts whose balance is not the sum of their deposits. Summed here, not by a join in SQL:
   * H2 joins accounts with ops by scanning every op per account, minutes for a long run.
   */
  /**
   * A connection whose reads all see one snapshot of the database (taken at its first read): a
   * handler still running when the audit starts (one past its ask's timeout) may commit between
   * two of the audit's queries, and must then be seen by all of them or by none.
   */
  static Connection snapshot(String url) throws SQLException {
    Connection c = DriverManager.getConnection(url, "sa", "");
    try {
      try (Statement s = c.createStatement()) {
        // H2's SNAPSHOT: every table as of the transaction's first read (REPEATABLE READ in H2 only
        // keeps the rows already read)
        s.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SNAPSHOT");
      }
      c.setAutoCommit(false);
      c.setReadOnly(true);
    } catch (SQLException e) {
      c.close();
      throw e;
    }
    return c;
  }

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
