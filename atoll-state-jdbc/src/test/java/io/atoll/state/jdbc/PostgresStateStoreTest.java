package io.atoll.state.jdbc;

import io.atoll.core.spi.ServerProcess;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreContract;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The state store contract against a real PostgreSQL server, started by the test on a free
 * loopback port with a fresh data directory. Each test has its own table.
 */
class PostgresStateStoreTest extends StateStoreContract {

  @TempDir
  static Path logs;
  static ServerProcess server;
  private static final AtomicInteger tables = new AtomicInteger();

  @BeforeAll
  static void startServer() throws Exception {
    server = ServerProcess.postgres(logs);
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  static PGSimpleDataSource dataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setServerNames(new String[] {"127.0.0.1"});
    ds.setPortNumbers(new int[] {server.port()});
    ds.setDatabaseName("postgres");
    ds.setUser("atoll");
    ds.setConnectTimeout(5);
    return ds;
  }

  @Override
  protected StateStore openFresh() throws Exception {
    return JdbcStateStore.open(dataSource(), "state_" + tables.incrementAndGet(), Duration.ofSeconds(5));
  }

  @Override
  protected StateStore openAnother(StateStore store) throws Exception {
    return JdbcStateStore.open(dataSource(), "state_" + tables.get(), Duration.ofSeconds(5));
  }

  @org.junit.jupiter.api.Test
  void podsStartingTogetherOnAFreshDatabaseAllOpenTheStore() throws Exception {
    String table = "together_" + tables.incrementAndGet();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      java.util.List<java.util.concurrent.Future<JdbcStateStore>> opened = new java.util.ArrayList<>();
      java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
      for (int i = 0; i < 8; i++) {
        opened.add(pool.submit(() -> {
          go.await();
          return JdbcStateStore.open(dataSource(), table, Duration.ofSeconds(5));
        }));
      }
      go.countDown();
      for (var f : opened) {
        f.get(30, java.util.concurrent.TimeUnit.SECONDS).close();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Override
  protected boolean restartServer() {
    server.restart();
    return true;
  }
}
