package io.atoll.kv;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** A few KV nodes in this JVM on ephemeral loopback ports, each with its own data directory. */
final class KvNodes implements AutoCloseable {
  final List<KvServer> servers = new ArrayList<>();
  final Path root;

  KvNodes(int n) throws IOException {
    root = Files.createTempDirectory("atoll-kv-test");
    for (int i = 0; i < n; i++) {
      servers.add(KvServer.start(KvSettings.defaults(0, root.resolve("n" + i)).withNodeTimeout(2000)));
    }
  }

  /**
   * A port {@code p} below the ephemeral range, free on 127.0.0.1 with {@code p + 10000} (the
   * control port a managed node derives from it) and {@code p + offset} for each offset (say a TLS
   * port) free too.
   */
  static int freeManagedPorts(int... offsets) throws IOException {
    java.util.Random r = new java.util.Random();
    search:
    for (int i = 0; i < 1000; i++) {
      int p = 11000 + r.nextInt(11000);
      if (!free(p) || !free(p + 10000)) {
        continue;
      }
      for (int o : offsets) {
        if (!free(p + o)) {
          continue search;
        }
      }
      return p;
    }
    throw new IOException("no free ports for a managed node");
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  KvServer get(int i) {
    return servers.get(i);
  }

  List<String> addresses() {
    return servers.stream().map(s -> "127.0.0.1:" + s.port()).toList();
  }

  @Override
  public void close() throws IOException {
    for (KvServer s : servers) {
      s.close();
    }
    try (Stream<Path> files = Files.walk(root)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
