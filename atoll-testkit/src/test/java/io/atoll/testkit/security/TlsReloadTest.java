package io.atoll.testkit.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.atoll.core.Ticker;
import io.atoll.core.spi.PodHealth;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ManagerSecurity;
import io.atoll.manager.ManagerSettings;
import io.atoll.manager.ShardManager;
import io.atoll.store.file.FileAssignmentStore;
import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hot reload of rotated certificate files: a manager running mutual TLS presents, on new
 * handshakes, the certificate written over its file while it runs; a rotation that does not load
 * (a file that is not a certificate) keeps the previous one. Real TLS handshakes on loopback.
 */
class TlsReloadTest {
  @TempDir
  Path dir;

  @Test
  void aRotatedCertificateIsPresentedOnNewHandshakesAndABrokenOneIsIgnored() throws Exception {
    Path certs = dir.resolve("certs");
    DevCa ca = DevCa.create("reload", Duration.ofDays(1));
    ca.writeCa(certs);
    DevCa.Issued first = ca.issue(Role.MANAGER, "manager", List.of());
    first.write(certs, "manager");
    WireSecurity wire = WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve("manager.pem"),
        certs.resolve("manager.key"));
    try (ShardManager manager = ShardManager.start(ManagerSettings.defaults().withNumberOfShards(4),
        FileAssignmentStore.open(dir.resolve("store")), PodHealth.LEASE_ONLY, "127.0.0.1", 0, Ticker.SYSTEM,
        new Random(), ManagerObserver.NONE, new ManagerSecurity(wire, ConfigSigner.generate()))) {
      int port = manager.address().port();
      assertThat(presented(port)).isEqualTo(first.certificate().getSerialNumber());

      DevCa.Issued second = ca.issue(Role.MANAGER, "manager", List.of());
      second.write(certs, "manager"); // atomic replacement of both files, as a rotation does
      await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
          .until(() -> presented(port).equals(second.certificate().getSerialNumber()));
      assertThat(wire.self().role()).isEqualTo(Role.MANAGER);

      // A half-done rotation: the certificate file is not PEM; the manager keeps the second one.
      Files.writeString(certs.resolve("manager.pem"), "not a certificate");
      long since = System.nanoTime();
      await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
          .until(() -> System.nanoTime() - since > 2_500_000_000L // past the once-a-second file check
              && presented(port).equals(second.certificate().getSerialNumber()));
    }
  }

  /** The serial number of the certificate the server at {@code port} presents on a new handshake. */
  private static BigInteger presented(int port) throws Exception {
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, new TrustManager[] {new TrustAll()}, new SecureRandom());
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      SSLParameters p = s.getSSLParameters();
      p.setApplicationProtocols(new String[] {"h2"});
      s.setSSLParameters(p);
      s.startHandshake();
      return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  /** The test only reads what the server presents; trust is the subject of other tests. */
  private static final class TrustAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
