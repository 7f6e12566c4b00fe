package io.atoll.server.demo;

import io.atoll.core.FencingToken;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Where the demo's statements ({@link io.atoll.server.demo.Statement}) keep their lines: tables of
 * their own in the demo's database, fenced as {@link AccountDb} fences accounts. An activation
 * claims its statement row by raising the row's token to its own; a line is booked only while the
 * row's token is not newer than the activation's, and each refusal is recorded with the time its
 * handler started, so that {@link StatementAudit} can tell a stale instance finishing (the case
 * fencing exists for) from two live ones. A line already booked (same op id) is recorded as a
 * duplicate and not booked again.
 */
public final class StatementDb implements AutoCloseable {

  private final ConnectionPool pool;

  /** At most {@code connections} connections to {@code url}: one opened now, the rest as needed. */
  public StatementDb(String url, int connections) throws SQLException {
    this.pool = new ConnectionPool(url, connections);
  }

  /** Creates the statements' tables if needed. */
  public static void createSchema(String url) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS statements (id VARCHAR(64) PRIMARY KEY, total BIGINT NOT NULL,"
          + " epoch BIGINT NOT NULL, generation BIGINT NOT NULL, pod VARCHAR(128))");
      s.execute("CREATE TABLE IF NOT EXISTS statement_lines (op_id BIGINT PRIMARY KEY, statement VARCHAR(64) NOT NULL,"
          + " amount BIGINT NOT NULL, epoch BIGINT NOT NULL, pod VARCHAR(128), activation BIGINT, started BIGINT)");
      s.execute("CREATE TABLE IF NOT EXISTS statement_activations (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
          + " statement VARCHAR(64) NOT NULL, pod VARCHAR(128), epoch BIGINT, started BIGINT, ended BIGINT)");
      s.execute("CREATE TABLE IF NOT EXISTS statement_stale_writes (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
          + " statement VARCHAR(64) NOT NULL, pod VARCHAR(128), epoch BIGINT, newer_epoch BIGINT, what VARCHAR(16),"
          + " started BIGINT)");
      s.execute("CREATE TABLE IF NOT EXISTS statement_duplicates (op_id BIGINT, statement VARCHAR(64), pod VARCHAR(128))");
    }
  }

  /** A write was refused because a newer activation owns the statement. */
  public static final class StaleTokenException extends Exception {
    StaleTokenException(String message) {
      super(message);
    }
  }

  private interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  private <T> T tx(Work<T> w) throws SQLException {
    Connection c = pool.take();
    try {
      T r = w.run(c);
      c.commit();
      return r;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      pool.give(c);
    }
  }

  /**
   * A started activation.
   *
   * @param id its id in the activation table
   * @param total the statement's total
   */
  public record Activation(long id, long total) {}

  /**
   * Starts an activation: claims the statement for {@code token} and logs it as started at
   * {@code started} (microseconds).
   *
   * @throws StaleTokenException if a newer activation already claimed it (recorded)
   */
  public Activation activate(String statement, FencingToken token, String pod, long started)
      throws SQLException, StaleTokenException {
    long[] out = new long[2];
    long newer = tx(c -> {
      long epoch = -1;
      long generation = 0;
      try (PreparedStatement q = c.prepareStatement(
          "SELECT total, epoch, generation FROM statements WHERE id = ? FOR UPDATE")) {
        q.setString(1, statement);
        try (ResultSet rs = q.executeQuery()) {
          if (rs.next()) {
            out[1] = rs.getLong(1);
            epoch = rs.getLong(2);
            generation = rs.getLong(3);
          }
        }
      }
      if (epoch > token.epoch() || (epoch == token.epoch() && generation > token.generation())) {
        return epoch;
      }
      try (PreparedStatement u = c.prepareStatement(epoch < 0
          ? "INSERT INTO statements (epoch, generation, pod, id, total) VALUES (?, ?, ?, ?, 0)"
          : "UPDATE statements SET epoch = ?, generation = ?, pod = ? WHERE id = ?")) {
        u.setLong(1, token.epoch());
        u.setLong(2, token.generation());
        u.setString(3, pod);
        u.setString(4, statement);
        u.executeUpdate();
      }
      try (PreparedStatement a = c.prepareStatement(
          "INSERT INTO statement_activations (statement, pod, epoch, started) VALUES (?, ?, ?, ?)",
          Statement.RETURN_GENERATED_KEYS)) {
        a.setString(1, statement);
        a.setString(2, pod);
        a.setLong(3, token.epoch());
        a.setLong(4, started);
        a.executeUpdate();
        try (ResultSet keys = a.getGeneratedKeys()) {
          keys.next();
          out[0] = keys.getLong(1);
        }
      }
      return -1L;
    });
    if (newer >= 0) {
      recordStale(statement, token, pod, newer, "activate", started);
      throw new StaleTokenException("statement " + statement + " is claimed at epoch " + newer
          + " by a newer token than " + token);
    }
    return new Activation(out[0], out[1]);
  }

  /** Logs the end of activation {@code id}. */
  public void stopped(long id) throws SQLException {
    long ended = AccountDb.nowMicros();
    tx(c -> {
      try (PreparedStatement u = c.prepareStatement("UPDATE statement_activations SET ended = ? WHERE id = ?")) {
        u.setLong(1, ended);
        u.setLong(2, id);
        return u.executeUpdate();
      }
    });
  }

  /**
   * Books line {@code opId} of {@code amount} under {@code token}; returns false, booking nothing,
   * if that op id is booked already (recorded as a duplicate).
   *
   * @throws StaleTokenException if a newer activation owns the statement (recorded)
   */
  public boolean book(String statement, long opId, long amount, FencingToken token, String pod, long activation,
      long started) throws SQLException, StaleTokenException {
    long newer;
    try {
      newer = tx(c -> {
        try (PreparedStatement d = c.prepareStatement("SELECT 1 FROM statement_lines WHERE op_id = ?")) {
          d.setLong(1, opId);
          try (ResultSet rs = d.executeQuery()) {
            if (rs.next()) {
              return -2L;
            }
          }
        }
        try (PreparedStatement u = c.prepareStatement("UPDATE statements SET total = total + ? WHERE id = ?"
            + " AND (epoch < ? OR (epoch = ? AND generation <= ?))")) {
          u.setLong(1, amount);
          u.setString(2, statement);
          u.setLong(3, token.epoch());
          u.setLong(4, token.epoch());
          u.setLong(5, token.generation());
          if (u.executeUpdate() == 0) {
            try (PreparedStatement q = c.prepareStatement("SELECT epoch FROM statements WHERE id = ?")) {
              q.setString(1, statement);
              try (ResultSet rs = q.executeQuery()) {
                return rs.next() ? rs.getLong(1) : Long.MAX_VALUE;
              }
            }
          }
        }
        try (PreparedStatement i = c.prepareStatement("INSERT INTO statement_lines (op_id, statement, amount, epoch,"
            + " pod, activation, started) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
          i.setLong(1, opId);
          i.setString(2, statement);
          i.setLong(3, amount);
          i.setLong(4, token.epoch());
          i.setString(5, pod);
          i.setLong(6, activation);
          i.setLong(7, started);
          i.executeUpdate();
        }
        return -1L;
      });
    } catch (SQLException e) {
      if (!"23505".equals(e.getSQLState())) { // a unique violation: booked by a concurrent transaction
        throw e;
      }
      newer = -2L;
    }
    if (newer == -2L) {
      insert("INSERT INTO statement_duplicates (op_id, statement, pod) VALUES (?, ?, ?)", opId, statement, pod);
      return false;
    }
    if (newer >= 0) {
      recordStale(statement, token, pod, newer, "book", started);
      throw new StaleTokenException("statement " + statement + " is claimed at epoch " + newer
          + " by a newer token than " + token);
    }
    return true;
  }

  private void recordStale(String statement, FencingToken token, String pod, long newer, String what, long started) {
    insert("INSERT INTO statement_stale_writes (statement, pod, epoch, newer_epoch, what, started)"
        + " VALUES (?, ?, ?, ?, ?, ?)", statement, pod, token.epoch(), newer, what, started);
  }

  /** Best effort: the refusal itself already protected the data. */
  private void insert(String sql, Object... values) {
    try {
      tx(c -> {
        try (PreparedStatement s = c.prepareStatement(sql)) {
          for (int i = 0; i < values.length; i++) {
            s.setObject(i + 1, values[i]);
          }
          return s.executeUpdate();
        }
      });
    } catch (SQLException e) {
      // recorded nothing; the audit counts less than happened, never more
    }
  }

  @Override
  public void close() {
    pool.close();
  }
}
