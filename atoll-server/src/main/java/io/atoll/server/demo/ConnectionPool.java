package io.atoll.server.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The demo's JDBC connections to its database: one opened at once (so a bad URL fails the pod's
 * start), the others as work needs them, up to a bound. A pod starting beside busy ones (the
 * demo's joining pod) then registers without first opening every connection one by one.
 */
final class ConnectionPool implements AutoCloseable {

  private final String url;
  private final int max;
  private final BlockingQueue<Connection> idle;
  private final AtomicInteger opened = new AtomicInteger();
  private volatile boolean closed;

  /** A pool of at most {@code max} connections to {@code url}, one opened now. */
  ConnectionPool(String url, int max) throws SQLException {
    if (max < 1) {
      throw new IllegalArgumentException("connections: " + max + " (expected: >= 1)");
    }
    this.url = url;
    this.max = max;
    this.idle = new ArrayBlockingQueue<>(max);
    opened.incrementAndGet();
    idle.add(open());
  }

  private Connection open() throws SQLException {
    Connection c = DriverManager.getConnection(url, "sa", "");
    c.setAutoCommit(false);
    c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    return c;
  }

  /** An idle connection, a new one while fewer than the bound are open, else the next one given back. */
  Connection take() throws SQLException {
    Connection c = idle.poll();
    if (c != null) {
      return c;
    }
    for (int n = opened.get(); n < max; n = opened.get()) {
      if (opened.compareAndSet(n, n + 1)) {
        try {
          return open();
        } catch (SQLException | RuntimeException e) {
          opened.decrementAndGet();
          throw e;
        }
      }
    }
    try {
      return idle.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted waiting for a connection", e);
    }
  }

  /** Gives {@code c} back (closes it if the pool was closed meanwhile). */
  void give(Connection c) {
    if (closed) {
      quietlyClose(c);
      return;
    }
    idle.add(c);
    if (closed && idle.remove(c)) {
      quietlyClose(c);
    }
  }

  @Override
  public void close() {
    closed = true;
    Connection c;
    while ((c = idle.poll()) != null) {
      quietlyClose(c);
    }
  }

  private static void quietlyClose(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      // closing anyway
    }
  }
}
