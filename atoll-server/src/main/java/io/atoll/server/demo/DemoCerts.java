package io.atoll.server.demo;

import io.atoll.runtime.Sharding;
import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** The certificates of a secure demo run: a CA, the manager's, one per pod, the client's, the signing key. */
final class DemoCerts {

  private final Path dir;

  private DemoCerts(Path dir) {
    this.dir = dir;
  }

  /** Makes them in {@code dir}: pods pod-1 .. pod-{@code pods}, and a client (a pod that only sends). */
  static DemoCerts create(Path dir, int pods) {
    DevCa ca = DevCa.create("atoll-demo", Duration.ofDays(1));
    ca.writeCa(dir);
    ca.issue(Role.MANAGER, "manager", List.of()).write(dir, "manager");
    for (int i = 1; i <= pods; i++) {
      ca.issue(Role.POD, "pod-" + i, List.of()).write(dir, "pod-" + i);
    }
    ca.issue(Role.POD, "client", List.of()).write(dir, "client");
    try {
      Files.writeString(dir.resolve("signing.key"), ConfigSigner.newKeyPem());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new DemoCerts(dir);
  }

  private List<String> tls(String name) {
    return List.of("--tls-ca", dir.resolve("ca.pem").toString(), "--tls-cert", dir.resolve(name + ".pem").toString(),
        "--tls-key", dir.resolve(name + ".key").toString());
  }

  /** The manager's TLS and signing-key arguments. */
  List<String> manager() {
    List<String> out = new java.util.ArrayList<>(tls("manager"));
    out.addAll(List.of("--signing-key", dir.resolve("signing.key").toString()));
    return out;
  }

  /** A pod's TLS arguments. */
  List<String> pod(String name) {
    return tls(name);
  }

  /** Secures the demo's client. */
  void client(Sharding.Builder b) {
    b.tls(dir.resolve("ca.pem"), dir.resolve("client.pem"), dir.resolve("client.key"));
  }
}
