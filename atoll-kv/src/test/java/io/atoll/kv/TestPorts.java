package io.atoll.kv;

/** Free loopback ports for nodes a test restarts on the same address. */
final class TestPorts {

  private TestPorts() {
  }

  /** A port free on 127.0.0.1 now. */
  static int free() {
    try (java.net.ServerSocket s = new java.net.ServerSocket()) {
      s.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
      return s.getLocalPort();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
