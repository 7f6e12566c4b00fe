package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code atoll certs}: the files it writes, their permissions and the roles in their subject
 * alternative names; and the bind gate: listening on a non-loopback address without TLS is refused
 * with a clear message unless {@code --insecure}, which is logged.
 */
class CertsAndBindTest {

  @TempDir
  Path dir;
  @org.junit.jupiter.api.extension.RegisterExtension
  final ConsoleCapture console = new ConsoleCapture();
  private final ByteArrayOutputStream err = console.err;
  private final ByteArrayOutputStream out = console.out;

  private String errText() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void certsWritesTheCaAndEveryRoleWithPrivateKeysOwnerOnly() throws Exception {
    Path certs = dir.resolve("certs");
    assertThat(Main.run(new String[] {"certs", "--out", certs.toString(), "--pods", "2", "--host", "10.1.2.3",
        "--host", "atoll.example"}, Map.of())).isEqualTo(0);
    List<String> names = List.of("ca.pem", "ca.key", "manager.pem", "manager.key", "admin.pem", "admin.key",
        "signing.key", "pod-1.pem", "pod-1.key", "pod-2.pem", "pod-2.key");
    for (String n : names) {
      assertThat(certs.resolve(n)).as(n).isRegularFile();
    }
    try (var files = Files.list(certs)) {
      assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactlyInAnyOrderElementsOf(names);
    }
    for (String n : names) {
      if (n.endsWith(".key")) {
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(certs.resolve(n))))
            .as("permissions of %s", n).isEqualTo("rw-------");
      }
    }
    X509Certificate ca = cert(certs.resolve("ca.pem"));
    assertThat(ca.getBasicConstraints()).as("the CA can issue").isGreaterThanOrEqualTo(0);
    assertThat(sans(certs.resolve("manager.pem"))).contains("atoll:manager", "localhost", "127.0.0.1", "10.1.2.3",
        "atoll.example");
    assertThat(sans(certs.resolve("pod-1.pem"))).contains(Role.POD.uri("pod-1")).doesNotContain("atoll:manager");
    assertThat(sans(certs.resolve("pod-2.pem"))).contains(Role.POD.uri("pod-2"));
    assertThat(sans(certs.resolve("admin.pem"))).contains(Role.ADMIN.uri("admin"));
    for (String n : List.of("manager", "admin", "pod-1", "pod-2")) {
      X509Certificate c = cert(certs.resolve(n + ".pem"));
      c.verify(ca.getPublicKey()); // issued by this CA
      assertThat(c.getBasicConstraints()).as("%s is not a CA", n).isEqualTo(-1);
    }
    // Each pair loads as the identity it claims.
    assertThat(WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve("pod-2.pem"), certs.resolve("pod-2.key"))
        .self().role()).isEqualTo(Role.POD);
    assertThat(WireSecurity.tls(certs.resolve("ca.pem"), certs.resolve("manager.pem"), certs.resolve("manager.key"))
        .self().role()).isEqualTo(Role.MANAGER);
    assertThat(Files.readString(certs.resolve("signing.key"))).contains("PRIVATE KEY");

    // With the CA there: a second run issues only what is asked for, by the same CA.
    assertThat(Main.run(new String[] {"certs", "--out", certs.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("already holds a CA (expected: --pod NAME to issue more, or another --out)");
    assertThat(Main.run(new String[] {"certs", "--out", certs.toString(), "--pod", "web-7"}, Map.of())).isEqualTo(0);
    cert(certs.resolve("web-7.pem")).verify(ca.getPublicKey());
    assertThat(sans(certs.resolve("web-7.pem"))).contains(Role.POD.uri("web-7"));
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(certs.resolve("web-7.key"))))
        .isEqualTo("rw-------");
    assertThat(cert(certs.resolve("ca.pem"))).isEqualTo(ca);
    assertThat(Main.run(new String[] {"certs", "--out", dir.resolve("x").toString(), "--days", "0"}, Map.of()))
        .isEqualTo(2);
    assertThat(errText()).contains("(expected: days >= 1, pods 0..1000)");
  }

  @Test
  void aNonLoopbackBindWithoutTlsIsRefusedBeforeAnythingStarts() {
    Path data = dir.resolve("data");
    assertThat(Main.run(new String[] {"manager", "--host", "0.0.0.0", "--port", "0", "--data-dir", data.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--host 0.0.0.0 is not a loopback address, and no TLS is configured")
        .contains("(expected: --tls-ca, --tls-cert and --tls-key from atoll certs, or --insecure to accept that)");
    err.reset();
    assertThat(Main.run(new String[] {"pod", "--manager", "127.0.0.1:1", "--host", "0.0.0.0", "--port", "0"},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--host 0.0.0.0 is not a loopback address");
    err.reset();
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--bind", "0.0.0.0", "--data-dir", data.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--bind 0.0.0.0 is not a loopback address");
    err.reset();
    assertThat(Main.run(new String[] {"manager", "--http-port", "0", "--http-host", "0.0.0.0", "--data-dir",
        data.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--http-host 0.0.0.0 is not a loopback address, and the HTTP endpoint has no TLS");
    assertThat(data).as("nothing started").doesNotExist();
  }

  @Test
  void kvTlsPortAndPasswordOptionsAreCheckedBeforeAnythingStarts() throws Exception {
    Path data = dir.resolve("kv");
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--tls-port", "0", "--data-dir", data.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--tls-port needs --tls-ca, --tls-cert and --tls-key");
    Path certs = dir.resolve("certs");
    assertThat(Main.run(new String[] {"certs", "--out", certs.toString(), "--pods", "1"}, Map.of())).isEqualTo(0);
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--tls-port", "0", "--tls-auth-clients", "maybe",
        "--tls-ca", certs.resolve("ca.pem").toString(), "--tls-cert", certs.resolve("pod-1.pem").toString(),
        "--tls-key", certs.resolve("pod-1.key").toString(), "--data-dir", data.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("tls-auth-clients: 'maybe' (expected: yes, optional or no)");
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--tls-ca", certs.resolve("ca.pem").toString(),
        "--tls-cert", certs.resolve("pod-1.pem").toString(), "--tls-key", certs.resolve("pod-1.key").toString(),
        "--data-dir", data.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("without either they do nothing");
    Path empty = dir.resolve("empty-password");
    Files.writeString(empty, "\n");
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--requirepass-file", empty.toString(), "--data-dir",
        data.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("empty (expected: the password on its first line)");
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--requirepass", "a", "--requirepass-file",
        empty.toString(), "--data-dir", data.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--requirepass and --requirepass-file: both given");
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--tls-only", "--data-dir", data.toString()}, Map.of()))
        .isEqualTo(2);
    assertThat(errText()).contains("--tls-only needs --tls-port");
    assertThat(data).as("nothing started").doesNotExist();
  }

  @Test
  void kvRefusesAPasswordInClearTextOnANonLoopbackAddressSayingWhy() throws Exception {
    Path data = dir.resolve("kv");
    Path certs = dir.resolve("certs");
    assertThat(Main.run(new String[] {"certs", "--out", certs.toString(), "--pods", "1"}, Map.of())).isEqualTo(0);
    String expected = "--bind 0.0.0.0 is not a loopback address, and a password is set without --tls-port: the"
        + " password (every client's AUTH, and the nodes' slot hand-offs) and the keys would cross the network in"
        + " clear (expected: --tls-port with --tls-ca, --tls-cert and --tls-key from atoll certs, or"
        + " --allow-cleartext-password to accept that)";
    // Redis-cluster mode, even with --insecure (which accepts a plaintext bus, not a clear-text password).
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--bind", "0.0.0.0", "--insecure", "--requirepass",
        "pw", "--data-dir", data.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains(expected);
    err.reset();
    // Managed mode with mutual TLS to the manager: the hand-offs would still go to the plaintext client ports.
    assertThat(Main.run(new String[] {"kv", "--port", "7101", "--bind", "0.0.0.0", "--manager", "127.0.0.1:1",
        "--tls-ca", certs.resolve("ca.pem").toString(), "--tls-cert", certs.resolve("pod-1.pem").toString(),
        "--tls-key", certs.resolve("pod-1.key").toString(), "--requirepass", "pw", "--data-dir", data.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains(expected);
    err.reset();
    // Redis-cluster mode with a TLS port: MIGRATE still reaches the target's plaintext port with AUTH.
    String[] tls = {"--tls-port", "7102", "--tls-ca", certs.resolve("ca.pem").toString(), "--tls-cert",
        certs.resolve("pod-1.pem").toString(), "--tls-key", certs.resolve("pod-1.key").toString()};
    assertThat(Main.run(concat(new String[] {"kv", "--port", "7101", "--bind", "0.0.0.0", "--insecure",
        "--requirepass", "pw", "--data-dir", data.toString()}, tls), Map.of())).isEqualTo(2);
    assertThat(errText()).contains("a password is set without --manager: slots then move by MIGRATE");
    err.reset();
    // and --tls-only there would close the port MIGRATE needs
    assertThat(Main.run(concat(new String[] {"kv", "--port", "7101", "--insecure", "--tls-only", "--data-dir",
        data.toString()}, tls), Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--tls-only needs --manager");
    assertThat(data).as("nothing started").doesNotExist();
  }

  private static String[] concat(String[] a, String[] b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void insecureLetsItThroughAndSaysSoAndLoopbackOrTlsNeedNothing() {
    TlsOptions insecure = new TlsOptions();
    insecure.insecure = true;
    insecure.checkBind("--host", "0.0.0.0", false);
    assertThat(errText()).contains("INSECURE: listening on 0.0.0.0 (--host) without TLS, as --insecure allows");
    TlsOptions strict = new TlsOptions();
    strict.checkBind("--host", "127.0.0.1", false);
    strict.checkBind("--host", "localhost", false);
    strict.checkBind("--host", "0.0.0.0", true);
    assertThatThrownBy(() -> strict.checkBind("--host", "0.0.0.0", false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--insecure");
    assertThatThrownBy(() -> strict.checkBind("--bind", "no-such-host.invalid", false))
        .hasMessageContaining("is not a loopback address");
  }

  private static X509Certificate cert(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static List<String> sans(Path pem) throws Exception {
    List<String> names = new ArrayList<>();
    Collection<List<?>> all = cert(pem).getSubjectAlternativeNames();
    for (List<?> san : all) {
      names.add(String.valueOf(san.get(1)));
    }
    return names;
  }
}
