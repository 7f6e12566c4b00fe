package io.atoll.kv;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * A TLS client port, as Redis' {@code tls-port}: clients such as {@code redis-cli --tls}, Lettuce
 * and Jedis with SSL connect to it; the plaintext port stays open as well unless {@code only}. A
 * node advertises its TLS port to clients that came over TLS (in redirects and in CLUSTER SLOTS,
 * SHARDS and NODES). The files are loaded again when they change (a rotated certificate is served
 * on new connections; one that does not load is ignored, keeping the previous one). In managed
 * mode the node hands slots off to the other nodes' TLS ports with this certificate (mutual TLS),
 * which must then be a pod certificate of the CA.
 *
 * @param port the TLS port, 0 for any free port
 * @param ca the CA certificate(s) (PEM) that client certificates must be issued by
 * @param cert the node's certificate (chain, PEM)
 * @param key its private key (PEM, unencrypted PKCS#8)
 * @param clientCerts whether clients must present a certificate of {@code ca} (Redis'
 *     {@code tls-auth-clients})
 * @param only whether clients are served over TLS only: the plaintext client port is not opened
 *     (its number still names the node, and a managed node's control port is that number + 10000)
 */
public record KvTls(int port, Path ca, Path cert, Path key, ClientCerts clientCerts, boolean only) {

  /** A TLS port beside the plaintext one. */
  public KvTls(int port, Path ca, Path cert, Path key, ClientCerts clientCerts) {
    this(port, ca, cert, key, clientCerts, false);
  }

  /** This, serving clients over TLS only ({@code true}) or over both ports. */
  public KvTls withOnly(boolean tlsOnly) {
    return new KvTls(port, ca, cert, key, clientCerts, tlsOnly);
  }

  /** Redis' {@code tls-auth-clients}: yes, optional or no. */
  public enum ClientCerts {
    /** Every client must present a certificate of the CA ({@code yes}, Redis' default). */
    REQUIRE,
    /** A client may present one; if it does, it must be of the CA ({@code optional}). */
    OPTIONAL,
    /** Clients are not asked for one ({@code no}). */
    NONE;

    /**
     * Redis' words: {@code yes}, {@code optional}, {@code no}.
     *
     * @throws IllegalArgumentException for any other word
     */
    public static ClientCerts parse(String redisWord) {
      return switch (redisWord.toLowerCase(Locale.ROOT)) {
        case "yes" -> REQUIRE;
        case "optional" -> OPTIONAL;
        case "no" -> NONE;
        default -> throw new IllegalArgumentException("tls-auth-clients: '" + redisWord
            + "' (expected: yes, optional or no)");
      };
    }
  }

  /** Validates the port and that every file is named. */
  public KvTls {
    Objects.requireNonNull(ca, "ca");
    Objects.requireNonNull(cert, "cert");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(clientCerts, "clientCerts");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("tls port: " + port + " (expected: 0..65535)");
    }
  }
}
