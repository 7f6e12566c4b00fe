package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A store's server ({@code redis-server}, {@code etcd}) run by a test as a real process on
 * 127.0.0.1, with its output in a log file. Started by {@link #start}, restarted on the same
 * ports and data by {@link #restart}, stopped by {@link #close}.
 *
 * <p>A missing binary fails the test under CI ({@code CI=true}: CI installs the servers, so a
 * missing one is a broken setup) and skips it with the reason elsewhere.
 */
public final class ServerProcess implements AutoCloseable {

  private final List<String> command;
  private final Path log;
  private final int port;
  private Process process;

  private ServerProcess(List<String> command, Path log, int port) {
    this.command = command;
    this.log = log;
    this.port = port;
  }

  /**
   * The path of an installed binary.
   *
   * @param name the binary, e.g. {@code etcd}
   * @param debianPackage the Debian package that installs it, for the message
   */
  public static String binary(String name, String debianPackage) {
    for (String dir : (System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/bin:/usr/sbin")
        .split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
        return Path.of(dir, name).toString();
      }
    }
    String why = name + " is not installed (install the Debian package " + debianPackage
        + ": apt-get install -y " + debianPackage + "; .ci/run does)";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      fail(why + " — under CI the store tests must run, not be skipped");
    }
    Assumptions.abort(why);
    throw new AssertionError("unreachable");
  }

  /** A port free on 127.0.0.1 now. */
  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("no free port on 127.0.0.1: " + e, e);
    }
  }

  /**
   * A {@code redis-server} on a free loopback port with its data (AOF, fsync on every write, so a
   * restart keeps every acknowledged write) in {@code dir}.
   */
  public static ServerProcess redis(Path dir) throws IOException {
    String binary = binary("redis-server", "redis-server");
    int port = freePort();
    Files.createDirectories(dir);
    return start(List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(),
        "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
        "--protected-mode", "yes"), dir.resolve("redis.log"), port);
  }

  /**
   * A single-member {@code etcd} on free loopback ports (client and peer) with its data in
   * {@code dir}; {@link #port()} is the client port.
   */
  public static ServerProcess etcd(Path dir) throws IOException {
    String binary = binary("etcd", "etcd-server");
    int client = freePort();
    int peer = freePort();
    String clientUrl = "http://127.0.0.1:" + client;
    String peerUrl = "http://127.0.0.1:" + peer;
    Files.createDirectories(dir);
    return start(List.of(binary, "--name", "atoll", "--data-dir", dir.resolve("data").toString(),
        "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
        "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
        "--initial-cluster", "atoll=" + peerUrl, "--initial-cluster-state", "new",
        // a short election timeout makes etcd's smallest lease 1 s instead of 2 s
        "--heartbeat-interval", "50", "--election-timeout", "500"), dir.resolve("etcd.log"), client);
  }

  /** Starts {@code command}, logging to {@code log}, and waits until {@code port} accepts. */
  public static ServerProcess start(List<String> command, Path log, int port) {
    ServerProcess p = new ServerProcess(List.copyOf(command), log, port);
    p.run();
    return p;
  }

  private void run() {
    try {
      process = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + command + ": " + e, e);
    }
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
      if (!process.isAlive()) {
        fail(command.getFirst() + " exited with " + process.exitValue() + " at start; see " + log + ":\n"
            + Files.readString(log));
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return true;
      } catch (IOException e) {
        return false;
      }
    });
  }

  /** Stops the server (SIGTERM, so it flushes what it persists) and starts it again. */
  public void restart() {
    stop();
    run();
  }

  private void stop() {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The port the server listens on. */
  public int port() {
    return port;
  }

  @Override
  public void close() {
    stop();
    process = null;
  }
}
