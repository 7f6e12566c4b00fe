package io.atoll.store.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * Where and how to reach Redis, parsed from a URI:
 *
 * <pre>
 * redis://[user:password@]host[:port][/database][?prefix=atoll&amp;timeout=5s]
 * rediss://...[&amp;cacert=/path/ca.pem]        TLS (the JVM's trust store unless cacert is given)
 * </pre>
 *
 * <p>The port defaults to 6379, the database to 0, the key prefix to {@code atoll} (keys are
 * {@code {prefix}:state}, {@code {prefix}:term}, {@code {prefix}:leader}: one hash tag, so one
 * Redis Cluster slot), the command timeout to 5 s. A password alone is {@code :password@}. User
 * and password are percent-decoded. Unknown parameters are refused.
 *
 * @param host the server's host
 * @param port its port
 * @param tls whether to connect with TLS ({@code rediss})
 * @param user the ACL user, or null for the default user
 * @param password the password, or null for none
 * @param database the database number
 * @param prefix the key prefix
 * @param timeout the command timeout
 * @param caCert a PEM file of trusted certificates for TLS, or null for the JVM's trust store
 */
public record RedisStoreOptions(String host, int port, boolean tls, String user, String password, int database,
    String prefix, Duration timeout, Path caCert) {

  /** Checks each value. */
  public RedisStoreOptions {
    if (host == null || host.isEmpty()) {
      throw new IllegalArgumentException("redis store: no host (expected: redis://host:port)");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("redis store: port " + port + " (expected: 1..65535)");
    }
    if (database < 0) {
      throw new IllegalArgumentException("redis store: database " + database + " (expected: >= 0)");
    }
    if (prefix == null || !prefix.matches("[A-Za-z0-9_.-]{1,64}")) {
      throw new IllegalArgumentException("redis store: prefix '" + prefix
          + "' (expected: 1..64 of letters, digits, '_', '.', '-')");
    }
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("redis store: timeout " + timeout + " (expected: > 0, e.g. 5s)");
    }
    if (caCert != null && !tls) {
      throw new IllegalArgumentException("redis store: cacert is given without TLS (expected: a rediss:// URI)");
    }
  }

  /**
   * Parses a {@code redis://} or {@code rediss://} URI.
   *
   * @throws IllegalArgumentException naming what is wrong and the expected form
   */
  public static RedisStoreOptions parse(String uri) {
    String form = " (expected: redis://[user:password@]host:port[/db][?prefix=..&timeout=..],"
        + " or rediss:// for TLS)";
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException("redis store: empty URI" + form);
    }
    URI u;
    try {
      u = new URI(uri.strip());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("redis store: '" + uri + "' is not a URI: " + e.getReason() + form, e);
    }
    String scheme = u.getScheme();
    if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
      throw new IllegalArgumentException("redis store: scheme '" + scheme + "' in '" + uri + "'" + form);
    }
    if (u.getHost() == null) {
      throw new IllegalArgumentException("redis store: no host in '" + uri + "'" + form);
    }
    String user = null;
    String password = null;
    if (u.getRawUserInfo() != null) {
      String info = u.getRawUserInfo();
      int colon = info.indexOf(':');
      if (colon < 0) {
        password = decode(info); // redis://password@host, as redis-cli takes it
      } else {
        user = colon == 0 ? null : decode(info.substring(0, colon));
        password = decode(info.substring(colon + 1));
      }
    }
    int database = 0;
    String path = u.getPath();
    if (path != null && !path.isEmpty() && !path.equals("/")) {
      try {
        database = Integer.parseInt(path.substring(1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("redis store: database '" + path.substring(1) + "' in '" + uri
            + "' (expected: a number, e.g. /0)");
      }
    }
    String prefix = "atoll";
    Duration timeout = Duration.ofSeconds(5);
    Path caCert = null;
    if (u.getRawQuery() != null) {
      for (String pair : u.getRawQuery().split("&")) {
        int eq = pair.indexOf('=');
        String key = eq < 0 ? pair : pair.substring(0, eq);
        String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
        switch (key) {
          case "prefix" -> prefix = value;
          case "timeout" -> timeout = duration(value, uri);
          case "cacert" -> caCert = Path.of(value);
          default -> throw new IllegalArgumentException("redis store: unknown parameter '" + key + "' in '" + uri
              + "' (expected: prefix, timeout, cacert)");
        }
      }
    }
    return new RedisStoreOptions(u.getHost(), u.getPort() < 0 ? 6379 : u.getPort(), "rediss".equals(scheme), user,
        password, database, prefix, timeout, caCert);
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  /** {@code 5s}, {@code 500ms}, {@code 2m} or an ISO-8601 duration. */
  static Duration duration(String value, String uri) {
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
      throw new IllegalArgumentException("redis store: timeout '" + value + "' in '" + uri
          + "' (expected: e.g. 500ms, 5s, 1m)", e);
    }
  }

  /** Where this store lives, without the password: {@code redis://user@host:port/db (prefix p)}. */
  public String describe() {
    return (tls ? "rediss://" : "redis://") + Optional.ofNullable(user).map(x -> x + "@").orElse("") + host + ":"
        + port + "/" + database + " (prefix " + prefix + ")";
  }

  @Override
  public String toString() {
    return describe();
  }
}
