package io.atoll.kv;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} in cluster mode on a free loopback port, for differential tests: the
 * test is skipped where it is not installed (CI installs it). Its files and log go to a directory
 * of the caller's.
 */
final class RedisServer implements AutoCloseable {
  private final Process process;
  final int port;

  private RedisServer(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts one named {@code name} in {@code dir}, with {@code extra} options; waits until it answers. */
  static RedisServer start(Path dir, String name, String... extra) throws Exception {
    boolean installed;
    try {
      installed = new ProcessBuilder("redis-server", "--version").start().waitFor() == 0;
    } catch (IOException e) {
      installed = false;
    }
    Assumptions.assumeTrue(installed,
        "redis-server is not installed on this machine: apt-get install redis-server (CI's .ci/run installs it)");
    int port;
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("127.0.0.1", 0));
      port = s.getLocalPort();
    }
    java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of("redis-server", "--port",
        Integer.toString(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file",
        dir.resolve(name + "-nodes.conf").toString(), "--dir", dir.toString(), "--save", "", "--appendonly", "no"));
    cmd.addAll(java.util.List.of(extra));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile())
        .start();
    int bound = port;
    await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
      try (Wire w = new Wire(bound)) {
        return w.call("PING").equals("+PONG\r\n");
      }
    });
    return new RedisServer(p, port);
  }

  @Override
  public void close() throws InterruptedException {
    process.destroyForcibly().waitFor();
  }
}
