package io.atoll.state.jdbc;

import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreContract;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state store contract on H2, the embedded database: a file database per test, which a
 * "restart" closes (the last connection gone) and opens again.
 */
class H2StateStoreTest extends StateStoreContract {

  @TempDir
  static Path dir;
  private static final AtomicInteger databases = new AtomicInteger();
  private JdbcDataSource dataSource;

  @Override
  protected StateStore openFresh() throws Exception {
    dataSource = new JdbcDataSource();
    dataSource.setURL("jdbc:h2:file:" + dir.resolve("db" + databases.incrementAndGet()) + ";LOCK_TIMEOUT=5000");
    return JdbcStateStore.open(dataSource, JdbcStateStore.DEFAULT_TABLE, Duration.ofSeconds(5));
  }

  @Override
  protected StateStore openAnother(StateStore store) throws Exception {
    return JdbcStateStore.open(dataSource, JdbcStateStore.DEFAULT_TABLE, Duration.ofSeconds(5));
  }

  @Override
  protected boolean restartServer() throws Exception {
    // Without DB_CLOSE_DELAY, H2 closes a file database when its last connection closes, and the
    // store holds none between calls: the next call opens the database again from its file.
    try (var c = dataSource.getConnection(); var s = c.createStatement()) {
      s.execute("SHUTDOWN");
    }
    return true;
  }
}
