package io.atoll.store.redis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.spi.AssignmentStore;
import io.atoll.core.spi.AssignmentStoreContract;
import io.atoll.core.spi.ServerProcess;
import io.atoll.core.spi.StoreException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store contract against a real {@code redis-server} on a free loopback port, with AOF on so
 * that a restart keeps the state. Each test has its own key prefix.
 */
class RedisAssignmentStoreTest extends AssignmentStoreContract {

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

  static String uri(String prefix) {
    return "redis://127.0.0.1:" + server.port() + "/0?prefix=" + prefix + "&timeout=3s";
  }

  @Override
  protected boolean toldOfLeaseChanges() {
    return true;
  }

  @Override
  protected AssignmentStore openFresh() {
    return RedisAssignmentStore.open(uri("t" + prefixes.incrementAndGet()));
  }

  @Override
  protected AssignmentStore openAnother(AssignmentStore store) {
    return RedisAssignmentStore.open(((RedisAssignmentStore) store).options());
  }

  @Override
  protected void restartServer() {
    server.restart();
  }

  @Test
  void aServerThatIsNotThereIsAClearErrorAtOpen() {
    int port = ServerProcess.freePort();
    assertThatThrownBy(() -> RedisAssignmentStore.open("redis://127.0.0.1:" + port + "?timeout=1s"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("redis store redis://127.0.0.1:" + port)
        .hasMessageContaining("cannot connect");
  }

  @Test
  void aWrongPasswordIsAClearErrorAtOpen() {
    assertThatThrownBy(() -> RedisAssignmentStore.open("redis://someone:secret@127.0.0.1:" + server.port()))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("cannot connect")
        .hasMessageNotContaining("secret");
  }
}
