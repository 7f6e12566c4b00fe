package io.atoll.core;

import java.util.Objects;

/**
 * Where a pod (or the shard manager) listens: a host and a TCP port.
 *
 * @param host a host name or IP literal, not blank, at most {@link #MAX_HOST_BYTES} bytes of UTF-8
 * @param port a TCP port in {@code 1..65535}
 */
public record PodAddress(String host, int port) implements Comparable<PodAddress> {

  /** The longest host, in bytes of UTF-8: what a config can carry (and DNS allows 253). */
  public static final int MAX_HOST_BYTES = 255;

  /**
   * Validates the parts with the config decoder's own rules, so that every address a pod or the
   * manager accepts can be stored and read back.
   *
   * @throws IllegalArgumentException naming the part, what it got and what is expected
   */
  public PodAddress {
    Objects.requireNonNull(host, "host");
    Texts.check("host", host, MAX_HOST_BYTES, "a host name or IP address");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
    }
  }

  /**
   * Parses {@code host:port}; an IPv6 literal is written in brackets ({@code [::1]:7070}).
   *
   * @throws IllegalArgumentException naming the text and the expected form
   */
  public static PodAddress parse(String text) {
    Objects.requireNonNull(text, "text");
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("address: '" + text + "' (expected: host:port)");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("address: '" + text + "' (expected: host:port with a numeric port)");
    }
    return new PodAddress(host, port);
  }

  @Override
  public int compareTo(PodAddress other) {
    int c = host.compareTo(other.host);
    return c != 0 ? c : Integer.compare(port, other.port);
  }

  @Override
  public String toString() {
    return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
  }
}
