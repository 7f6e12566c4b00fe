package io.atoll.testkit.net;

/** Free loopback ports, for a server a test must know the port of before it starts. */
public final class Ports {

  private Ports() {
  }

  /** A port free on 127.0.0.1 now (another process may take it before it is bound). */
  public static int free() {
    try (java.net.ServerSocket s = new java.net.ServerSocket()) {
      s.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
