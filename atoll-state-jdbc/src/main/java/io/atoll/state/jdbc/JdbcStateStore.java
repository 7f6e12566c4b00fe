package io.atoll.state.jdbc;

import io.atoll.core.FencingToken;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreException;
import io.atoll.core.spi.StoredState;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Durable entities' state in a SQL database, through any {@link DataSource} (bring your pool): one
 * row per entity in one table, holding the greatest token that claimed or wrote it, the revision
 * and the state. Tested on PostgreSQL and H2.
 *
 * <p>A save is one {@code UPDATE ... WHERE revision = ? AND} (no greater token): the database
 * compares and writes in one step. A claim raises the token with the same kind of {@code UPDATE} and
 * reads the row in the same transaction, which holds the row's lock until it commits. A first claim
 * or save inserts the row; two racing inserts leave one, and the other call starts over.
 *
 * <p>The primary key is the SHA-256 of the entity's type and id, so that ids of up to 1,024
 * characters (3 KB of UTF-8) fit any database's index; the type and the id are kept beside it in
 * plain text for people. The table:
 *
 * <pre>
 * CREATE TABLE IF NOT EXISTS atoll_entity_state (entity_key CHAR(64) PRIMARY KEY,
 *     entity_type VARCHAR(255) NOT NULL, entity_id VARCHAR(1024) NOT NULL, epoch BIGINT NOT NULL,
 *     generation BIGINT NOT NULL, revision BIGINT NOT NULL, state BYTEA)
 * </pre>
 *
 * <p>An acknowledged save is as durable as the database's commit ({@code synchronous_commit} on
 * PostgreSQL). A statement that fails or passes the timeout fails the call with
 * {@code UNAVAILABLE}: the caller cannot tell whether it was done, and a claim says.
 */
public final class JdbcStateStore implements StateStore {

  /** The table name unless another is given. */
  public static final String DEFAULT_TABLE = "atoll_entity_state";

  /** Racing inserts of one row that a call retries before it gives up. */
  private static final int ATTEMPTS = 5;

  private static final String TOKEN_NOT_GREATER = "(epoch < ? OR (epoch = ? AND generation <= ?))";

  private final DataSource dataSource;
  private final String table;
  private final int timeoutSeconds;
  private final String name;
  private volatile boolean closed;

  private JdbcStateStore(DataSource dataSource, String table, int timeoutSeconds) {
    this.dataSource = dataSource;
    this.table = table;
    this.timeoutSeconds = timeoutSeconds;
    this.name = "jdbc state store (table " + table + ")";
  }

  /**
   * A store in {@code table} of the database behind {@code dataSource}, creating the table if it
   * does not exist. Every statement times out after {@code timeout} (whole seconds, at least 1).
   *
   * @throws IllegalArgumentException if the table name is not 1..63 of {@code [A-Za-z0-9_]}
   *     starting with a letter or {@code _}, or the timeout is under a second
   * @throws StateStoreException {@code UNAVAILABLE} if the table cannot be created
   */
  public static JdbcStateStore open(DataSource dataSource, String table, Duration timeout) throws StateStoreException {
    Objects.requireNonNull(dataSource, "dataSource");
    if (table == null || !table.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
      throw new IllegalArgumentException("jdbc state store: table '" + table
          + "' (expected: 1..63 of letters, digits and '_', not starting with a digit)");
    }
    if (timeout == null || timeout.toSeconds() < 1) {
      throw new IllegalArgumentException("jdbc state store: timeout " + timeout + " (expected: at least 1 s)");
    }
    JdbcStateStore s = new JdbcStateStore(dataSource, table, (int) Math.min(Integer.MAX_VALUE, timeout.toSeconds()));
    s.createTable();
    return s;
  }

  /** A store in {@link #DEFAULT_TABLE}, with statements timing out after 5 s. */
  public static JdbcStateStore open(DataSource dataSource) throws StateStoreException {
    return open(dataSource, DEFAULT_TABLE, Duration.ofSeconds(5));
  }

  private void createTable() throws StateStoreException {
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
      s.setQueryTimeout(timeoutSeconds);
      s.execute("CREATE TABLE IF NOT EXISTS " + table + " (entity_key CHAR(64) PRIMARY KEY,"
          + " entity_type VARCHAR(255) NOT NULL, entity_id VARCHAR(1024) NOT NULL, epoch BIGINT NOT NULL,"
          + " generation BIGINT NOT NULL, revision BIGINT NOT NULL, state BYTEA)");
    } catch (SQLException e) {
      // Two pods creating the table at once: PostgreSQL may fail one of them with a duplicate key
      // in its catalog, though the table is there. It is the table that counts.
      if (!tableExists()) {
        throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, name + ": cannot create the table: " + e, e);
      }
    }
  }

  private boolean tableExists() {
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
      s.setQueryTimeout(timeoutSeconds);
      s.executeQuery("SELECT entity_key FROM " + table + " WHERE 1 = 0").close();
      return true;
    } catch (SQLException e) {
      return false;
    }
  }

  /**
   * The row key of an entity: SHA-256 of its type's length, type and id as UTF-16 (every Java
   * string has one, even with a lone surrogate, where UTF-8 would turn two ids into one), in hex.
   */
  static String key(String type, String id) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update((type.length() + ":" + type + ":" + id).getBytes(StandardCharsets.UTF_16BE));
      return HexFormat.of().formatHex(d.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * The id as the {@code entity_id} column shows it, for people (the key is what counts): NUL,
   * which PostgreSQL's text refuses, becomes U+FFFD, and a lone surrogate '?'.
   */
  static String shown(String id) {
    // UTF-8's encoder replaces a lone surrogate ('?'); decoding gives the id back otherwise.
    return new String(id.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).replace('\0', '\uFFFD');
  }

  /** What a row held when a conditional statement changed nothing. */
  private record Row(long epoch, long generation, long revision) {
    boolean greaterThan(FencingToken t) {
      return new FencingToken(t.shard(), epoch, generation).compareTo(t) > 0;
    }
  }

  @Override
  public StoredState claim(String type, String id, FencingToken token) throws StateStoreException {
    String key = key(type, id);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      try (Connection c = connection()) {
        c.setAutoCommit(false);
        try {
          StoredState s = claimIn(c, key, type, id, token);
          c.commit();
          if (s != null) {
            return s;
          }
        } catch (SQLException | StateStoreException | RuntimeException e) {
          rollback(c);
          if (!(e instanceof SQLException q && duplicate(q))) {
            throw e;
          }
        }
      } catch (SQLException e) {
        throw unavailable("claim", type, id, e);
      }
    }
    throw raced("claim", type, id);
  }

  /** One try at a claim in transaction {@code c}; null if a racing call changed the row meanwhile. */
  private StoredState claimIn(Connection c, String key, String type, String id, FencingToken token)
      throws SQLException, StateStoreException {
    try (PreparedStatement u = c.prepareStatement("UPDATE " + table + " SET epoch = ?, generation = ?"
        + " WHERE entity_key = ? AND " + TOKEN_NOT_GREATER)) {
      u.setQueryTimeout(timeoutSeconds);
      u.setLong(1, token.epoch());
      u.setLong(2, token.generation());
      u.setString(3, key);
      bindToken(u, 4, token);
      if (u.executeUpdate() == 1) {
        try (PreparedStatement q = c.prepareStatement("SELECT revision, state FROM " + table + " WHERE entity_key = ?")) {
          q.setQueryTimeout(timeoutSeconds);
          q.setString(1, key);
          try (ResultSet r = q.executeQuery()) {
            r.next();
            long revision = r.getLong(1);
            return revision == 0 ? StoredState.NONE : new StoredState(revision, r.getBytes(2));
          }
        }
      }
    }
    Row row = row(c, key);
    if (row == null) {
      insert(c, key, type, id, token, 0, null);
      return StoredState.NONE;
    }
    if (row.greaterThan(token)) {
      throw fenced(type, id, token, row);
    }
    return null; // the row changed between the two statements: try again
  }

  @Override
  public long save(String type, String id, FencingToken token, long revision, byte[] state) throws StateStoreException {
    StateStore.checkSave(type, id, revision, state);
    String key = key(type, id);
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      try (Connection c = connection()) {
        c.setAutoCommit(true);
        try (PreparedStatement u = c.prepareStatement("UPDATE " + table + " SET epoch = ?, generation = ?,"
            + " revision = ?, state = ? WHERE entity_key = ? AND revision = ? AND " + TOKEN_NOT_GREATER)) {
          u.setQueryTimeout(timeoutSeconds);
          u.setLong(1, token.epoch());
          u.setLong(2, token.generation());
          u.setLong(3, revision + 1);
          u.setBytes(4, state);
          u.setString(5, key);
          u.setLong(6, revision);
          bindToken(u, 7, token);
          if (u.executeUpdate() == 1) {
            return revision + 1;
          }
        }
        Row row = row(c, key);
        if (row == null && revision == 0) {
          try {
            insert(c, key, type, id, token, 1, state);
            return 1;
          } catch (SQLException e) {
            if (!duplicate(e)) {
              throw e;
            }
            continue; // another call inserted the row first: compare with it
          }
        }
        if (row != null && row.greaterThan(token)) {
          throw fenced(type, id, token, row);
        }
        long stored = row == null ? 0 : row.revision;
        if (stored != revision) {
          throw new StateStoreException(StateStoreException.Reason.CONFLICT, name + ": state of " + type + "/" + id
              + " written at revision " + revision + " but the store holds revision " + stored);
        }
        // The row changed between the two statements: try again.
      } catch (SQLException e) {
        throw unavailable("save", type, id, e);
      }
    }
    throw raced("save", type, id);
  }

  private Connection connection() throws SQLException, StateStoreException {
    if (closed) {
      throw new StateStoreException(StateStoreException.Reason.UNAVAILABLE, name + ": closed");
    }
    return dataSource.getConnection();
  }

  private static void bindToken(PreparedStatement s, int from, FencingToken token) throws SQLException {
    s.setLong(from, token.epoch());
    s.setLong(from + 1, token.epoch());
    s.setLong(from + 2, token.generation());
  }

  private Row row(Connection c, String key) throws SQLException {
    try (PreparedStatement q = c.prepareStatement("SELECT epoch, generation, revision FROM " + table
        + " WHERE entity_key = ?")) {
      q.setQueryTimeout(timeoutSeconds);
      q.setString(1, key);
      try (ResultSet r = q.executeQuery()) {
        return r.next() ? new Row(r.getLong(1), r.getLong(2), r.getLong(3)) : null;
      }
    }
  }

  private void insert(Connection c, String key, String type, String id, FencingToken token, long revision, byte[] state)
      throws SQLException {
    try (PreparedStatement i = c.prepareStatement("INSERT INTO " + table
        + " (entity_key, entity_type, entity_id, epoch, generation, revision, state) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
      i.setQueryTimeout(timeoutSeconds);
      i.setString(1, key);
      i.setString(2, type);
      i.setString(3, shown(id));
      i.setLong(4, token.epoch());
      i.setLong(5, token.generation());
      i.setLong(6, revision);
      i.setBytes(7, state);
      i.executeUpdate();
    }
  }

  /** A unique-key violation (SQLSTATE 23505 on PostgreSQL and H2): another call inserted the row first. */
  private static boolean duplicate(SQLException e) {
    return "23505".equals(e.getSQLState());
  }

  private static void rollback(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // the connection is closed next; the database rolls back an unfinished transaction
    }
  }

  private StateStoreException fenced(String type, String id, FencingToken token, Row row) {
    return new StateStoreException(StateStoreException.Reason.FENCED, name + ": state of " + type + "/" + id
        + " is claimed by epoch " + row.epoch + " generation " + row.generation
        + ", newer than this activation's (epoch " + token.epoch() + " generation " + token.generation() + ")");
  }

  private StateStoreException unavailable(String what, String type, String id, SQLException e) {
    return new StateStoreException(StateStoreException.Reason.UNAVAILABLE, name + ": " + what + " of " + type + "/" + id
        + " failed (it may or may not have been done): " + e.getMessage() + " (SQLSTATE " + e.getSQLState() + ")", e);
  }

  private StateStoreException raced(String what, String type, String id) {
    return new StateStoreException(StateStoreException.Reason.UNAVAILABLE, name + ": " + what + " of " + type + "/" + id
        + " lost " + ATTEMPTS + " races in a row with other calls on the same entity; try again");
  }

  /** Further calls fail; the data source is the caller's to close. */
  @Override
  public void close() {
    closed = true;
  }

  @Override
  public String toString() {
    return name;
  }
}
