package io.atoll.server.demo;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Checks the statements' ledger against their tables ({@link StatementDb}) after a run, as
 * {@link Audit} checks the accounts: every acknowledged line booked, no line refused as overloaded
 * booked all the same, no line booked twice, each total the sum of its lines, no older activation
 * acting after a newer one of the same statement started, no total read back missing an
 * acknowledged line.
 *
 * @param sent lines sent
 * @param acknowledged lines acknowledged
 * @param unacknowledged lines that failed or timed out (their fate may be either)
 * @param lost acknowledged lines missing from the database
 * @param appliedRefused lines refused as overloaded that are in the database all the same
 * @param duplicateActivations refused writes of an older activation that started after a newer one
 *     of the same statement had started: two live instances
 * @param fencedWrites writes refused by the fencing token, all of them
 * @param duplicateLines lines delivered twice (refused by their op id)
 * @param unbalanced statements whose total differs from the sum of their lines
 * @param activations activations recorded
 * @param staleReads totals asked back that missed an acknowledged line
 * @param reads totals asked back
 */
record StatementAudit(long sent, long acknowledged, long unacknowledged, long lost, long appliedRefused,
    long duplicateActivations, long fencedWrites, long duplicateLines, long unbalanced, long activations,
    long staleReads, long reads) {

  /** Whether the run kept every promise for the statements. */
  boolean ok() {
    return lost == 0 && appliedRefused == 0 && duplicateActivations == 0 && duplicateLines == 0 && unbalanced == 0
        && staleReads == 0;
  }

  /** Audits {@code ledger} against the statements' tables in the database at {@code url}. */
  static StatementAudit of(Ledger ledger, String url) throws SQLException {
    Set<Long> booked = new HashSet<>();
    Map<String, Long> sums = new HashMap<>();
    long unbalanced = 0;
    long fenced;
    long dupActivations;
    long dupLines;
    long activations;
    try (Connection c = Audit.snapshot(url); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT op_id, statement, amount FROM statement_lines")) {
        while (rs.next()) {
          booked.add(rs.getLong(1));
          sums.merge(rs.getString(2), rs.getLong(3), Long::sum);
        }
      }
      try (ResultSet rs = s.executeQuery("SELECT id, total FROM statements")) {
        while (rs.next()) {
          unbalanced += rs.getLong(2) == sums.getOrDefault(rs.getString(1), 0L) ? 0 : 1;
        }
      }
      fenced = count(s, "SELECT COUNT(*) FROM statement_stale_writes");
      dupActivations = count(s, "SELECT COUNT(*) FROM statement_stale_writes w WHERE w.started > (SELECT"
          + " MIN(a.started) FROM statement_activations a WHERE a.statement = w.statement AND a.epoch = w.newer_epoch)");
      dupLines = count(s, "SELECT COUNT(*) FROM statement_duplicates");
      activations = count(s, "SELECT COUNT(*) FROM statement_activations");
    }
    long lost = ledger.ackedOps().stream().filter(op -> !booked.contains(op)).count();
    long appliedRefused = ledger.refusedOps().stream().filter(booked::contains).count();
    return new StatementAudit(ledger.sentCount(), ledger.ackedCount(), ledger.failedCount(), lost, appliedRefused,
        dupActivations, fenced, dupLines, unbalanced, activations, ledger.staleReads(), ledger.reads());
  }

  private static long count(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Prints the statements' part of the summary; returns {@link #ok()}. */
  boolean print(PrintStream out) {
    out.println();
    out.println("== statements (second entity type, role " + io.atoll.server.demo.Statement.ROLE + ") ==");
    out.printf("lines sent             %,d%n", sent);
    out.printf("acknowledged           %,d%n", acknowledged);
    out.printf("unacknowledged         %,d   (refused as overloaded, or failed or timed out)%n", unacknowledged);
    out.printf("refused yet applied    %,d%n", appliedRefused);
    out.printf("lost                   %,d   (acknowledged but missing from the database)%n", lost);
    out.printf("duplicate activations  %,d   (an older activation starting work after a newer one started)%n",
        duplicateActivations);
    out.printf("fenced writes          %,d%n", fencedWrites);
    out.printf("duplicate lines        %,d   (a line delivered twice, refused by its op id)%n", duplicateLines);
    out.printf("unbalanced statements  %,d   (total differs from the sum of its lines)%n", unbalanced);
    out.printf("stale total reads      %,d of %,d%n", staleReads, reads);
    out.printf("activations            %,d%n", activations);
    out.println(ok() ? "statements: OK, nothing lost, no statement ever live twice"
        : "statements: FAILED (see above)");
    return ok();
  }
}
