package io.atoll.examples.carts;

import io.atoll.core.FencingToken;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.TreeMap;

/**
 * Carts in a SQL database, written with each activation's fencing token: an activation claims the
 * cart's row by raising its epoch to the token's, and writes only while the row's epoch is still
 * its own. Once a newer activation (after a move, or after this pod was cut off and fenced) has
 * claimed the cart, the older one can never write again, even if it is still running.
 */
public final class CartStore {

  /** A newer activation owns the cart: this one must stop. */
  public static final class FencedException extends Exception {
    FencedException(String message) {
      super(message);
    }
  }

  private final String url;

  /** A store in the database at {@code url}, creating its table if needed. */
  public CartStore(String url) throws SQLException {
    this.url = url;
    try (Connection c = connect(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS carts (id VARCHAR(128) PRIMARY KEY, epoch BIGINT NOT NULL,"
          + " items VARCHAR(65536) NOT NULL)");
    }
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(url, "sa", "");
  }

  /** Claims {@code cart} for the activation holding {@code token}; returns its items. */
  public Map<String, Integer> claim(String cart, FencingToken token) throws SQLException, FencedException {
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      try (PreparedStatement insert = c.prepareStatement(
          "MERGE INTO carts KEY (id) SELECT ?, -1, '' FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM carts WHERE id = ?)")) {
        insert.setString(1, cart);
        insert.setString(2, cart);
        insert.executeUpdate();
      }
      try (PreparedStatement raise = c.prepareStatement("UPDATE carts SET epoch = ? WHERE id = ? AND epoch <= ?")) {
        raise.setLong(1, token.epoch());
        raise.setString(2, cart);
        raise.setLong(3, token.epoch());
        if (raise.executeUpdate() != 1) {
          c.rollback();
          throw new FencedException("cart " + cart + " is claimed by an activation newer than epoch " + token.epoch());
        }
      }
      Map<String, Integer> items;
      try (PreparedStatement read = c.prepareStatement("SELECT items FROM carts WHERE id = ?")) {
        read.setString(1, cart);
        try (ResultSet r = read.executeQuery()) {
          r.next();
          items = decode(r.getString(1));
        }
      }
      c.commit();
      return items;
    }
  }

  /** Saves {@code items} unless a newer activation than {@code token}'s has claimed the cart. */
  public void save(String cart, FencingToken token, Map<String, Integer> items) throws SQLException, FencedException {
    try (Connection c = connect();
        PreparedStatement w = c.prepareStatement("UPDATE carts SET items = ? WHERE id = ? AND epoch = ?")) {
      w.setString(1, encode(items));
      w.setString(2, cart);
      w.setLong(3, token.epoch());
      if (w.executeUpdate() != 1) {
        throw new FencedException("cart " + cart + ": write refused, a newer activation than epoch "
            + token.epoch() + " owns it");
      }
    }
  }

  static String encode(Map<String, Integer> items) {
    StringBuilder sb = new StringBuilder();
    items.forEach((sku, n) -> sb.append(sku).append('=').append(n).append('\n'));
    return sb.toString();
  }

  static Map<String, Integer> decode(String s) {
    Map<String, Integer> items = new TreeMap<>();
    for (String line : s.split("\n")) {
      int eq = line.lastIndexOf('=');
      if (eq > 0) {
        items.put(line.substring(0, eq), Integer.parseInt(line.substring(eq + 1)));
      }
    }
    return items;
  }
}
