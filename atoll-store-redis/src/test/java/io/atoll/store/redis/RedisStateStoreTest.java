package io.atoll.store.redis;

import io.atoll.core.spi.ServerProcess;
import io.atoll.core.spi.StateStore;
import io.atoll.core.spi.StateStoreContract;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state store contract against a real {@code redis-server} on a free loopback port, with every
 * write fsynced to its append-only file, so a restart keeps every acknowledged save. Each test has
 * its own key prefix.
 */
class RedisStateStoreTest extends StateStoreContract {

  @TempDir
  static Path data;
  static ServerProcess server;
  private static final AtomicInteger prefixes = new AtomicInteger();

  @BeforeAll
  static void startServer() throws Exception {
    server = ServerProcess.redis(data.resolve("redis"));
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  protected StateStore openFresh() {
    return RedisStateStore.open("redis://127.0.0.1:" + server.port() + "/0?prefix=s" + prefixes.incrementAndGet()
        + "&timeout=5s");
  }

  @Override
  protected StateStore openAnother(StateStore store) {
    return RedisStateStore.open(((RedisStateStore) store).options());
  }

  @Override
  protected boolean restartServer() {
    server.restart();
    return true;
  }
}
