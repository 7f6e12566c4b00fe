package io.atoll.server;

import io.atoll.testkit.tls.DevCa;
import io.atoll.transport.grpc.security.ConfigSigner;
import io.atoll.transport.grpc.security.Role;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code atoll certs}: a development CA and the certificates of a cluster, as PEM files. Roles are
 * subject alternative name URIs ({@code atoll:manager}, {@code atoll:pod:NAME},
 * {@code atoll:admin:NAME}); any CA that writes them works the same in production.
 */
@Command(name = "certs", mixinStandardHelpOptions = true,
    description = "Creates a development CA and the certificates of a cluster (PEM): ca.pem, manager.pem,"
        + " pod-N.pem, admin.pem with their .key files, and signing.key, the manager's Ed25519 key. With an"
        + " existing CA in --out, issues only what is asked for (--pod NAME).")
final class CertsCommand implements Callable<Integer> {

  @Option(names = "--out", required = true, description = "Directory to write into (created).")
  Path out;

  @Option(names = "--pods", defaultValue = "3", description = "How many pod certificates (pod-1 ...) to issue for a new"
      + " CA (default: ${DEFAULT-VALUE}).")
  int pods;

  @Option(names = "--pod", description = "Issue a certificate for this pod name (repeatable), with the CA in --out.")
  List<String> podNames = new ArrayList<>();

  @Option(names = "--host", description = "An extra DNS name or IP address for every certificate (repeatable);"
      + " localhost and 127.0.0.1 are always in.")
  List<String> hosts = new ArrayList<>();

  @Option(names = "--days", defaultValue = "365", description = "Validity in days (default: ${DEFAULT-VALUE}).")
  int days;

  @Override
  public Integer call() {
    if (days < 1 || pods < 0 || pods > 1000) {
      System.err.println("atoll certs: --days " + days + " --pods " + pods + " (expected: days >= 1, pods 0..1000)");
      return 2;
    }
    try {
      Duration validity = Duration.ofDays(days);
      boolean existing = Files.exists(out.resolve(DevCa.CA_CERT)) && Files.exists(out.resolve(DevCa.CA_KEY));
      List<String> written = new ArrayList<>();
      DevCa ca;
      if (existing) {
        ca = DevCa.load(out, validity);
        if (podNames.isEmpty()) {
          System.err.println("atoll certs: " + out + " already holds a CA (expected: --pod NAME to issue more, or"
              + " another --out)");
          return 2;
        }
      } else {
        ca = DevCa.create("atoll-dev-" + out.toAbsolutePath().getFileName(), validity);
        ca.writeCa(out);
        written.add(DevCa.CA_CERT + " " + DevCa.CA_KEY);
        ca.issue(Role.MANAGER, "manager", hosts).write(out, "manager");
        written.add("manager.pem manager.key (atoll:manager)");
        ca.issue(Role.ADMIN, "admin", hosts).write(out, "admin");
        written.add("admin.pem admin.key (atoll:admin:admin)");
        Path signing = out.resolve("signing.key");
        Files.writeString(signing, ConfigSigner.newKeyPem());
        ownerOnly(signing);
        written.add("signing.key (the manager's Ed25519 key)");
        for (int i = 1; i <= pods; i++) {
          podNames.add(i - 1, "pod-" + i);
        }
      }
      for (String name : podNames) {
        ca.issue(Role.POD, name, hosts).write(out, name);
        written.add(name + ".pem " + name + ".key (" + Role.POD.uri(name) + ")");
      }
      System.out.println("atoll certs: wrote into " + out.toAbsolutePath() + ":");
      written.forEach(w -> System.out.println("  " + w));
      System.out.println("Keep ca.key and signing.key private: whoever holds ca.key can issue any role.");
      return 0;
    } catch (IllegalArgumentException | IllegalStateException | IOException | java.io.UncheckedIOException e) {
      System.err.println("atoll certs: " + e.getMessage());
      return 1;
    }
  }

  private static void ownerOnly(Path f) throws IOException {
    try {
      Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
    } catch (UnsupportedOperationException e) {
      // not a POSIX file system
    }
  }
}
