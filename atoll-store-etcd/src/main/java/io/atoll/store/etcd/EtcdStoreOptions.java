package io.atoll.store.etcd;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * Where and how to reach etcd, parsed from a URI:
 *
 * <pre>
 * etcd://[user:password@]host:port[,host:port...][/prefix][?timeout=5s&amp;max-bytes=1500000]
 * etcds://...[&amp;cacert=/path/ca.pem]        TLS (the JVM's trust store unless cacert is given)
 * </pre>
 *
 * <p>The port defaults to 2379, the key prefix to {@code atoll} (keys {@code /prefix/state},
 * {@code /prefix/term}, {@code /prefix/leader}), the call timeout to 5 s, and the largest state to
 * 1,500,000 bytes (etcd's default {@code --max-request-bytes} is 1.5 MiB; raise both together).
 * User and password are percent-decoded. Unknown parameters are refused.
 *
 * @param endpoints {@code host:port} of each member
 * @param tls whether to connect with TLS ({@code etcds})
 * @param user the user, or null without authentication
 * @param password the password, or null
 * @param prefix the key prefix
 * @param timeout the timeout of each call
 * @param maxBytes the largest state this store accepts
 * @param caCert a PEM file of trusted certificates for TLS, or null for the JVM's trust store
 */
public record EtcdStoreOptions(List<String> endpoints, boolean tls, String user, String password, String prefix,
    Duration timeout, int maxBytes, Path caCert) {

  private static final String FORM = " (expected: etcd://[user:password@]host:port[,host:port][/prefix]"
      + "[?timeout=5s&max-bytes=N], or etcds:// for TLS)";

  /** Checks each value. */
  public EtcdStoreOptions {
    endpoints = List.copyOf(endpoints);
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("etcd store: no endpoint" + FORM);
    }
    if ((user == null) != (password == null)) {
      throw new IllegalArgumentException("etcd store: a user needs a password and a password a user" + FORM);
    }
    if (prefix == null || !prefix.matches("[A-Za-z0-9_.-]{1,64}")) {
      throw new IllegalArgumentException("etcd store: prefix '" + prefix
          + "' (expected: 1..64 of letters, digits, '_', '.', '-')");
    }
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("etcd store: timeout " + timeout + " (expected: > 0, e.g. 5s)");
    }
    if (maxBytes < 1 || maxBytes > 1 << 30) {
      throw new IllegalArgumentException("etcd store: max-bytes " + maxBytes + " (expected: 1.." + (1 << 30) + ")");
    }
    if (caCert != null && !tls) {
      throw new IllegalArgumentException("etcd store: cacert is given without TLS (expected: an etcds:// URI)");
    }
  }

  /**
   * Parses an {@code etcd://} or {@code etcds://} URI.
   *
   * @throws IllegalArgumentException naming what is wrong and the expected form
   */
  public static EtcdStoreOptions parse(String uri) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException("etcd store: empty URI" + FORM);
    }
    String s = uri.strip();
    boolean tls;
    if (s.startsWith("etcd://")) {
      tls = false;
      s = s.substring("etcd://".length());
    } else if (s.startsWith("etcds://")) {
      tls = true;
      s = s.substring("etcds://".length());
    } else {
      throw new IllegalArgumentException("etcd store: '" + uri + "' has no etcd:// or etcds:// scheme" + FORM);
    }
    String query = null;
    int q = s.indexOf('?');
    if (q >= 0) {
      query = s.substring(q + 1);
      s = s.substring(0, q);
    }
    String prefix = "atoll";
    int slash = s.indexOf('/');
    if (slash >= 0) {
      String p = s.substring(slash + 1);
      if (!p.isEmpty()) {
        prefix = p;
      }
      s = s.substring(0, slash);
    }
    String user = null;
    String password = null;
    int at = s.lastIndexOf('@');
    if (at >= 0) {
      String info = s.substring(0, at);
      s = s.substring(at + 1);
      int colon = info.indexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException("etcd store: credentials in '" + redact(uri)
            + "' are not user:password" + FORM);
      }
      user = decode(info.substring(0, colon));
      password = decode(info.substring(colon + 1));
    }
    List<String> endpoints = new ArrayList<>();
    for (String hp : s.split(",", -1)) {
      endpoints.add(endpoint(hp, uri));
    }
    Duration timeout = Duration.ofSeconds(5);
    int maxBytes = 1_500_000;
    Path caCert = null;
    if (query != null && !query.isEmpty()) {
      for (String pair : query.split("&")) {
        int eq = pair.indexOf('=');
        String key = eq < 0 ? pair : pair.substring(0, eq);
        String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
        switch (key) {
          case "timeout" -> timeout = duration(value, uri);
          case "max-bytes" -> {
            try {
              maxBytes = Integer.parseInt(value);
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException("etcd store: max-bytes '" + value + "' (expected: a number of bytes)");
            }
          }
          case "cacert" -> caCert = Path.of(value);
          default -> throw new IllegalArgumentException("etcd store: unknown parameter '" + key + "' in '"
              + redact(uri) + "' (expected: timeout, max-bytes, cacert)");
        }
      }
    }
    return new EtcdStoreOptions(endpoints, tls, user, password, prefix, timeout, maxBytes, caCert);
  }

  private static String endpoint(String hp, String uri) {
    if (hp.isEmpty()) {
      throw new IllegalArgumentException("etcd store: an empty endpoint in '" + redact(uri) + "'" + FORM);
    }
    String host = hp;
    int port = 2379;
    int colon = hp.lastIndexOf(':');
    if (colon >= 0 && !hp.endsWith("]")) {
      host = hp.substring(0, colon);
      try {
        port = Integer.parseInt(hp.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("etcd store: port '" + hp.substring(colon + 1) + "' in '" + redact(uri)
            + "' (expected: 1..65535)");
      }
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("etcd store: port " + port + " in '" + redact(uri) + "' (expected: 1..65535)");
    }
    if (host.isEmpty() || !host.matches("[A-Za-z0-9._\\-\\[\\]:]+")) {
      throw new IllegalArgumentException("etcd store: host '" + host + "' in '" + redact(uri) + "'" + FORM);
    }
    return host + ":" + port;
  }

  private static String redact(String uri) {
    return uri.replaceAll("//([^:/@]*):[^@/]*@", "//$1:***@").replaceAll("//[^:/@]*@", "//***@");
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static Duration duration(String value, String uri) {
    try {
      if (value.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(value.substring(0, value.length() - 2)));
      }
      if (value.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
      }
      if (value.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(value.substring(0, value.length() - 1)));
      }
      return Duration.parse(value);
    } catch (NumberFormatException | DateTimeParseException e) {
      throw new IllegalArgumentException("etcd store: timeout '" + value + "' in '" + redact(uri)
          + "' (expected: e.g. 500ms, 5s, 1m)", e);
    }
  }

  /** The URIs jetcd connects to. */
  List<String> targets() {
    return endpoints.stream().map(e -> (tls ? "https://" : "http://") + e).toList();
  }

  /** Where this store lives, without the password. */
  public String describe() {
    return (tls ? "etcds://" : "etcd://") + (user == null ? "" : user + "@") + String.join(",", endpoints) + "/"
        + prefix;
  }

  @Override
  public String toString() {
    return describe();
  }
}
