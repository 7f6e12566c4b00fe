package io.atoll.server;

import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/**
 * The transport-security options every command shares: mutual TLS from PEM files (as
 * {@code atoll certs} writes them), and {@code --insecure}, without which a command refuses to
 * listen on a non-loopback address in plaintext.
 */
final class TlsOptions {

  private static final Logger log = LoggerFactory.getLogger("io.atoll.security");

  @Option(names = "--tls-ca", description = "The cluster's CA certificate (PEM): peers must hold a certificate it issued."
      + " With --tls-cert and --tls-key, every gRPC connection is mutual TLS.")
  Path ca;

  @Option(names = "--tls-cert", description = "This process' certificate (PEM), holding its role (atoll certs).")
  Path cert;

  @Option(names = "--tls-key", description = "The certificate's private key (PEM, PKCS#8).")
  Path key;

  @Option(names = "--insecure", description = "Allow listening on a non-loopback address without TLS (anyone who"
      + " reaches the port can act as a pod or the manager); logged at every start.")
  boolean insecure;

  /**
   * The security these options ask for, holding {@code role} with TLS.
   *
   * @throws IllegalArgumentException naming the option if only some files are given, they do not
   *     load, or the certificate holds another role
   */
  WireSecurity security(Role role) {
    if (ca == null && cert == null && key == null) {
      return WireSecurity.PLAINTEXT;
    }
    if (ca == null || cert == null || key == null) {
      throw new IllegalArgumentException("--tls-ca, --tls-cert and --tls-key go together (given: "
          + (ca != null ? "--tls-ca " : "") + (cert != null ? "--tls-cert " : "") + (key != null ? "--tls-key" : "")
          + ")");
    }
    WireSecurity s = WireSecurity.tls(ca, cert, key);
    if (s.self().role() != role) {
      throw new IllegalArgumentException("--tls-cert " + cert + " holds " + s.self() + " (expected: a "
          + role.name().toLowerCase(Locale.ROOT) + " certificate, " + role.uri("NAME") + ")");
    }
    return s;
  }

  /**
   * Checks that listening on {@code host} is safe: a loopback address, or TLS, or {@code --insecure}
   * (then logs a warning, at every start).
   *
   * @param what the option that names the address, for the message
   * @param tls whether what listens there uses TLS
   * @throws IllegalArgumentException if it is not
   */
  void checkBind(String what, String host, boolean tls) {
    if (tls || isLoopback(host)) {
      return;
    }
    if (!insecure) {
      throw new IllegalArgumentException(what + " " + host + " is not a loopback address, and " + (what.contains("http")
          ? "the HTTP endpoint has no TLS" : "no TLS is configured") + ": anyone who reaches it could act as a pod or"
          + " the manager (expected: --tls-ca, --tls-cert and --tls-key from atoll certs, or --insecure to accept"
          + " that)");
    }
    log.warn("INSECURE: listening on {} ({}) without TLS, as --insecure allows: anyone who reaches it can act as a pod"
        + " or the manager", host, what);
  }

  static boolean isLoopback(String host) {
    try {
      for (InetAddress a : InetAddress.getAllByName(host)) {
        if (!a.isLoopbackAddress()) {
          return false;
        }
      }
      return true;
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
