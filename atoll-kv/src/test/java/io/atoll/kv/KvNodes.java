package io.atoll.kv;

import java.io.IOException;
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
