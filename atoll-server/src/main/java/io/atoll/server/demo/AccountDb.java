package io.atoll.server.demo;

import io.atoll.core.FencingToken;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.Statement;

/**
 * Where the demo's accounts keep their state: a JDBC database shared by every pod (H2 over TCP in
 * the demo), written with the activation's fencing token so that a stale instance's writes are
 * refused and recorded.
 *
 * <p>An activation claims its account row by raising the row's token (epoch, then lease
 * generation) to its own (it refuses to activate if the row already carries a newer one). A
 * deposit updates the row only while the row's token is not newer than its own: once a newer
 * activation (a newer epoch, or the same epoch after a lapse of the lease) has claimed the
 * account, an older one can never write again. Every refusal is recorded in {@code stale_writes}.
 *
 * <p>The tables are also the run's activation log, for {@link ActivationLog}. Two kinds of time:
 * <ul>
 *   <li><b>The database's order.</b> Every claim and every applied deposit raises the account
 *       row's {@code seq} while it holds the row's lock, and records the value ({@code
 *       activations.claim_seq}, {@code ops.seq}); the lock is held until the commit, so per
 *       account the numbers are exactly the order the database serialized claims and writes in.
 *   <li><b>This machine's wall clock</b> ({@link #nowMicros()}, microseconds; every process of a
 *       demo or chaos run reads the same clock): an activation's {@code started} (its factory
 *       began, before the claim), {@code claimed} (taken in the pod right after the claim's
 *       transaction committed, so after the factory's database round trip), {@code ended} (its
 *       termination message ran); and each write's handler {@code started} (its first line) and
 *       {@code ended}.
 * </ul>
 */
public final class AccountDb implements AutoCloseable {

  /** A write was refused because a newer activation owns the account. */
  public static final class StaleTokenException extends Exception {
    StaleTokenException(String message) {
      super(message);
    }
  }

  private final String url;
  private final ConnectionPool pool;

  /** At most {@code connections} connections to {@code url}: one opened now, the rest as needed. */
  public AccountDb(String url, int connections) throws SQLException {
    this.url = url;
    this.pool = new ConnectionPool(url, connections);
  }

  /** Creates the tables if needed. */
  public static void createSchema(String url) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, "sa", ""); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS accounts (id VARCHAR(64) PRIMARY KEY, balance BIGINT NOT NULL,"
          + " epoch BIGINT NOT NULL, generation BIGINT DEFAULT 0 NOT NULL, pod VARCHAR(128))");
      // A database made before tokens carried their lease generation.
      s.execute("ALTER TABLE accounts ADD COLUMN IF NOT EXISTS generation BIGINT DEFAULT 0 NOT NULL");
      s.execute("CREATE TABLE IF NOT EXISTS ops (op_id BIGINT PRIMARY KEY, account VARCHAR(64) NOT NULL,"
          + " amount BIGINT NOT NULL, epoch BIGINT NOT NULL, pod VARCHAR(128), activation BIGINT, started BIGINT,"
          + " ended BIGINT)");
      s.execute("CREATE TABLE IF NOT EXISTS activations (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
          + " account VARCHAR(64) NOT NULL, pod VARCHAR(128), shard INT, epoch BIGINT, started BIGINT, ended BIGINT)");
      s.execute("CREATE TABLE IF NOT EXISTS stale_writes (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
          + " account VARCHAR(64) NOT NULL, pod VARCHAR(128), epoch BIGINT, newer_epoch BIGINT, what VARCHAR(16),"
          + " activation BIGINT, started BIGINT, ended BIGINT, at TIMESTAMP)");
      // The activation log's serialization order and tokens (a database made before them gets them now).
      s.execute("ALTER TABLE accounts ADD COLUMN IF NOT EXISTS seq BIGINT DEFAULT 0 NOT NULL");
      s.execute("ALTER TABLE activations ADD COLUMN IF NOT EXISTS generation BIGINT DEFAULT 0 NOT NULL");
      s.execute("ALTER TABLE activations ADD COLUMN IF NOT EXISTS claim_seq BIGINT");
      s.execute("ALTER TABLE activations ADD COLUMN IF NOT EXISTS claimed BIGINT");
      s.execute("ALTER TABLE ops ADD COLUMN IF NOT EXISTS seq BIGINT");
      s.execute("ALTER TABLE stale_writes ADD COLUMN IF NOT EXISTS generation BIGINT DEFAULT 0 NOT NULL");
      s.execute("CREATE INDEX IF NOT EXISTS ops_activation ON ops (activation)");
      s.execute("CREATE TABLE IF NOT EXISTS duplicate_ops (op_id BIGINT, account VARCHAR(64), pod VARCHAR(128))");
    }
  }

  private interface Work<T> {
    T run(Connection c) throws SQLException, StaleTokenException;
  }

  private <T> T tx(Work<T> w) throws SQLException, StaleTokenException {
    Connection c = pool.take();
    try {
      T r = w.run(c);
      c.commit();
      return r;
    } catch (SQLException | StaleTokenException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      pool.give(c);
    }
  }

  /**
   * A started activation.
   *
   * @param id its id in the activation log
   * @param balance the account's balance
   */
  public record Activation(long id, long balance) {}

  /** Microseconds since the epoch by this machine's clock: the activation log's time. */
  public static long nowMicros() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  /**
   * Starts an activation: claims the account for {@code token}, logs the activation as started at
   * {@code started} (microseconds, taken before the claim) with the claim's place in the
   * database's order, then records when the claim had committed (as this process saw it, right
   * after the commit returned), and returns it.
   *
   * @throws StaleTokenException if a newer activation already claimed it (recorded)
   */
  public Activation activate(String account, FencingToken token, String pod, long started)
      throws SQLException, StaleTokenException {
    long[] balance = new long[1];
    long[] id = new long[1];
    long newer = tx(c -> {
      long current;
      long currentGeneration = 0;
      long seq = 0;
      try (PreparedStatement q = c.prepareStatement(
          "SELECT balance, epoch, generation, seq FROM accounts WHERE id = ? FOR UPDATE")) {
        q.setString(1, account);
        try (ResultSet rs = q.executeQuery()) {
          if (rs.next()) {
            balance[0] = rs.getLong(1);
            current = rs.getLong(2);
            currentGeneration = rs.getLong(3);
            seq = rs.getLong(4);
          } else {
            current = -1;
          }
        }
      }
      if (current > token.epoch() || (current == token.epoch() && currentGeneration > token.generation())) {
        return current;
      }
      if (current < 0) {
        try (PreparedStatement i = c.prepareStatement(
            "INSERT INTO accounts (id, balance, epoch, generation, pod, seq) VALUES (?, 0, ?, ?, ?, 1)")) {
          i.setString(1, account);
          i.setLong(2, token.epoch());
          i.setLong(3, token.generation());
          i.setString(4, pod);
          i.executeUpdate();
        }
      } else {
        try (PreparedStatement u = c.prepareStatement(
            "UPDATE accounts SET epoch = ?, generation = ?, pod = ?, seq = ? WHERE id = ?")) {
          u.setLong(1, token.epoch());
          u.setLong(2, token.generation());
          u.setString(3, pod);
          u.setLong(4, seq + 1);
          u.setString(5, account);
          u.executeUpdate();
        }
      }
      try (PreparedStatement a = c.prepareStatement(
          "INSERT INTO activations (account, pod, shard, epoch, generation, started, claim_seq)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?)", Statement.RETURN_GENERATED_KEYS)) {
        a.setString(1, account);
        a.setString(2, pod);
        a.setInt(3, token.shard());
        a.setLong(4, token.epoch());
        a.setLong(5, token.generation());
        a.setLong(6, started);
        a.setLong(7, seq + 1); // the row lock is held until the commit: this is the claim's place
        a.executeUpdate();
        try (ResultSet keys = a.getGeneratedKeys()) {
          keys.next();
          id[0] = keys.getLong(1);
        }
      }
      return -1L;
    });
    if (newer >= 0) {
      recordStale(account, token, pod, newer, "activate", -1, started);
      throw new StaleTokenException("account " + account + " is claimed at epoch " + newer + " by a newer token than "
          + token);
    }
    long claimed = nowMicros(); // the claim has committed: the factory returns after this
    try {
      tx(c -> {
        try (PreparedStatement u = c.prepareStatement("UPDATE activations SET claimed = ? WHERE id = ?")) {
          u.setLong(1, claimed);
          u.setLong(2, id[0]);
          u.executeUpdate();
        }
        return null;
      });
    } catch (SQLException | StaleTokenException e) {
      // the log then lacks this instant, and the audit excuses nothing that depends on it
    }
    return new Activation(id[0], balance[0]);
  }

  /** Logs the end of activation {@code id} (its last handler, the termination message, returned). */
  public void stopped(long id) throws SQLException, StaleTokenException {
    long ended = nowMicros();
    tx(c -> {
      try (PreparedStatement u = c.prepareStatement("UPDATE activations SET ended = ? WHERE id = ?")) {
        u.setLong(1, ended);
        u.setLong(2, id);
        u.executeUpdate();
      }
      return null;
    });
  }

  /**
   * Applies a deposit under {@code token} by activation {@code activation}, whose handler started at
   * {@code started} (microseconds); a deposit already applied (same op id) is not applied again.
   * Returns false for such a duplicate.
   *
   * @throws StaleTokenException if a newer activation owns the account (recorded)
   */
  public boolean deposit(String account, long opId, long amount, FencingToken token, String pod, long activation,
      long started) throws SQLException, StaleTokenException {
    long[] newer = {-1};
    boolean applied;
    try {
      applied = tx(c -> {
        long seq;
        try (PreparedStatement u = c.prepareStatement(
            "SELECT seq FROM FINAL TABLE (UPDATE accounts SET balance = balance + ?, seq = seq + 1 WHERE id = ?"
            + " AND (epoch < ? OR (epoch = ? AND generation <= ?)))")) {
          u.setLong(1, amount);
          u.setString(2, account);
          u.setLong(3, token.epoch());
          u.setLong(4, token.epoch());
          u.setLong(5, token.generation());
          try (ResultSet updated = u.executeQuery()) {
            seq = updated.next() ? updated.getLong(1) : -1;
          }
          if (seq < 0) {
            try (PreparedStatement q = c.prepareStatement("SELECT epoch FROM accounts WHERE id = ?")) {
              q.setString(1, account);
              try (ResultSet rs = q.executeQuery()) {
                newer[0] = rs.next() ? rs.getLong(1) : Long.MAX_VALUE;
              }
            }
            throw new StaleTokenException("account " + account + " is claimed at epoch " + newer[0]
                + " by a newer token than " + token);
          }
        }
        try (PreparedStatement i = c.prepareStatement(
            "INSERT INTO ops (op_id, account, amount, epoch, pod, activation, started, ended, seq)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
          i.setLong(1, opId);
          i.setString(2, account);
          i.setLong(3, amount);
          i.setLong(4, token.epoch());
          i.setString(5, pod);
          i.setLong(6, activation);
          i.setLong(7, started);
          i.setLong(8, nowMicros()); // the row lock is held: no newer claim can land before this commit
          i.setLong(9, seq); // this write's place in the database's order of the account's row
          i.executeUpdate();
        }
        return true;
      });
    } catch (StaleTokenException e) {
      recordStale(account, token, pod, newer[0], "deposit", activation, started);
      throw e;
    } catch (SQLIntegrityConstraintViolationException e) {
      recordDuplicate(opId, account, pod);
      return false;
    } catch (SQLException e) {
      if ("23505".equals(e.getSQLState())) { // unique violation
        recordDuplicate(opId, account, pod);
        return false;
      }
      throw e;
    }
    return applied;
  }

  private void recordStale(String account, FencingToken token, String pod, long newer, String what, long activation,
      long started) {
    long ended = nowMicros();
    try {
      tx(c -> {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO stale_writes (account, pod, epoch, generation,"
            + " newer_epoch, what, activation, started, ended, at)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, CURRENT_TIMESTAMP)")) {
          s.setString(1, account);
          s.setString(2, pod);
          s.setLong(3, token.epoch());
          s.setLong(4, token.generation());
          s.setLong(5, newer);
          s.setString(6, what);
          s.setLong(7, activation);
          s.setLong(8, started);
          s.setLong(9, ended);
          s.executeUpdate();
        }
        return null;
      });
    } catch (SQLException | StaleTokenException e) {
      // best effort: the refusal itself already protected the data
    }
  }

  private void recordDuplicate(long opId, String account, String pod) {
    try {
      tx(c -> {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO duplicate_ops (op_id, account, pod) VALUES (?, ?, ?)")) {
          s.setLong(1, opId);
          s.setString(2, account);
          s.setString(3, pod);
          s.executeUpdate();
        }
        return null;
      });
    } catch (SQLException | StaleTokenException e) {
      // best effort
    }
  }

  /** The JDBC URL. */
  public String url() {
    return url;
  }

  @Override
  public void close() {
    pool.close();
  }
}
