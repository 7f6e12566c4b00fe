package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.atoll.core.PodAddress;
import io.atoll.core.Ticker;
import io.atoll.core.spi.PodHealth;
import io.atoll.kv.KvObserver;
import io.atoll.kv.KvServer;
import io.atoll.kv.KvSettings;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.server.kvdemo.KvDemoRun;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A managed KV node and a shard manager that runs mutual TLS: with a pod certificate of the
 * cluster's CA the node registers and gets every slot; without one it refuses to start, saying
 * that a TLS manager needs --tls-ca, --tls-cert and --tls-key. Real manager, real gRPC on loopback.
 */
class KvTlsTest {
  @TempDir
  Path dir;

  private WireSecurity security(Path certs, String name) {
    return WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve(name + ".pem"), certs.resolve(name + ".key"));
  }

  @Test
  void aNodeWithAPodCertificateJoinsATlsManagerAndOneWithoutSaysWhatItNeeds() throws Exception {
    Path certs = dir.resolve("certs");
    DevCa ca = DevCa.create("test", Duration.ofDays(1));
    ca.writeCa(certs);
    ca.issue(Role.MANAGER, "manager", List.of()).write(certs, "manager");
    ca.issue(Role.POD, "kv1", List.of()).write(certs, "kv1");
    ManagerSettings settings = ManagerSettings.defaults().withNumberOfShards(16384)
        .withLease(Duration.ofSeconds(4), Duration.ofMillis(500));
    try (ShardManager manager = ShardManager.start(settings, FileAssignmentStore.open(dir.resolve("store")),
        PodHealth.LEASE_ONLY, "127.0.0.1", 0, Ticker.SYSTEM, new Random(), ManagerObserver.NONE,
        new ManagerSecurity(security(certs, "manager"), ConfigSigner.generate()))) {
      List<PodAddress> managers = List.of(manager.address());
      int port = KvDemoRun.freePorts(1)[0];
      assertThatThrownBy(() -> KvServer.startManaged(KvSettings.defaults(port, dir.resolve("plain")),
          KvObserver.NONE, managers, WireSecurity.PLAINTEXT, Duration.ofSeconds(2), () -> { }))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("without TLS").hasMessageContaining("--tls-ca, --tls-cert and --tls-key");
      int port2 = KvDemoRun.freePorts(1)[0];
      try (KvServer node = KvServer.startManaged(KvSettings.defaults(port2, dir.resolve("kv1")), KvObserver.NONE,
          managers, security(certs, "kv1"), Duration.ofSeconds(10), () -> { })) {
        // Lease renewals over TLS carry the credential; the node keeps its slots lease after lease.
        await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(25)).until(() ->
            node.ownedSlots() == 16384 && manager.config().activePods().size() == 1);
        assertThat(node.clusterOk()).isTrue();
      }
    }
  }
}
