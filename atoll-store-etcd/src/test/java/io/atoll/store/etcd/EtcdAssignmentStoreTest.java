package io.atoll.store.etcd;

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
 * The store contract against a real single-member {@code etcd} on free loopback ports, with its
 * data in a temporary directory. Each test has its own key prefix.
 */
class EtcdAssignmentStoreTest extends AssignmentStoreContract {

  @TempDir
  static Path data;
  static ServerProcess server;
  private static final AtomicInteger prefixes = new AtomicInteger();

  @BeforeAll
  static void startServer() throws Exception {
    server = ServerProcess.etcd(data.resolve("etcd"));
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  protected boolean toldOfLeaseChanges() {
    return true;
  }

  @Override
  protected AssignmentStore openFresh() {
    return EtcdAssignmentStore.open("etcd://127.0.0.1:" + server.port() + "/t" + prefixes.incrementAndGet()
        + "?timeout=3s");
  }

  @Override
  protected AssignmentStore openAnother(AssignmentStore store) {
    return EtcdAssignmentStore.open(((EtcdAssignmentStore) store).options());
  }

  @Override
  protected void restartServer() {
    server.restart();
  }

  @Test
  void aServerThatIsNotThereIsAClearErrorAtOpen() {
    int port = ServerProcess.freePort();
    assertThatThrownBy(() -> EtcdAssignmentStore.open("etcd://127.0.0.1:" + port + "?timeout=1s"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("etcd store etcd://127.0.0.1:" + port)
        .hasMessageContaining("cannot connect");
  }
}
