package io.atoll.server.demo;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A store's server for the demo and the chaos run: {@code redis-server} or {@code etcd} as a real
 * process on a free loopback port, its data and log in a directory. It can be stopped for a while
 * (SIGSTOP, then SIGCONT) and restarted on the same port and data. Not thread-safe.
 */
public final class StoreServer implements AutoCloseable {

  private final String kind;
  private final List<String> command;
  private final Path log;
  private final int port;
  private Process process;
  private boolean stopped;

  private StoreServer(String kind, List<String> command, Path log, int port) {
    this.kind = kind;
    this.command = command;
    this.log = log;
    this.port = port;
  }

  /**
   * Starts the server for {@code kind} ({@code redis} or {@code etcd}) with its data in {@code dir}.
   *
   * @throws IllegalArgumentException for another kind
   * @throws IllegalStateException if its binary is not installed (naming the Debian package), or it
   *     does not listen within 30 s
   */
  public static StoreServer start(String kind, Path dir) throws IOException {
    Files.createDirectories(dir);
    int port = freePort();
    StoreServer s = switch (kind.toLowerCase(Locale.ROOT)) {
      case "redis" -> new StoreServer("redis", List.of(binary("redis-server", "redis-server"), "--port",
          Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(), "--appendonly", "yes",
          "--appendfsync", "always", "--save", "", "--daemonize", "no", "--protected-mode", "yes"),
          dir.resolve("redis.log"), port);
      case "etcd" -> {
        int peer = freePort();
        String clientUrl = "http://127.0.0.1:" + port;
        String peerUrl = "http://127.0.0.1:" + peer;
        yield new StoreServer("etcd", List.of(binary("etcd", "etcd-server"), "--name", "atoll", "--data-dir",
            dir.resolve("data").toString(), "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
            "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl, "--initial-cluster",
            "atoll=" + peerUrl, "--initial-cluster-state", "new", "--heartbeat-interval", "50",
            "--election-timeout", "500"), dir.resolve("etcd.log"), port);
      }
      default -> throw new IllegalArgumentException("store: '" + kind + "' (expected: file, redis or etcd)");
    };
    s.run();
    return s;
  }

  /**
   * The path of an installed binary.
   *
   * @throws IllegalStateException naming the Debian package if it is not installed
   */
  public static String binary(String name, String debianPackage) {
    for (String dir : (System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/bin:/usr/sbin")
        .split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
        return Path.of(dir, name).toString();
      }
    }
    throw new IllegalStateException(name + " is not installed (expected: on the PATH; on Debian or Ubuntu:"
        + " apt-get install -y " + debianPackage + ")");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private void run() throws IOException {
    process = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException(command.getFirst() + " exited with " + process.exitValue()
            + " at start; see " + log);
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException e) {
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(command.getFirst() + " does not listen on 127.0.0.1:" + port
              + " within 30 s; see " + log, e);
        }
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the pace of the checks
    }
  }

  /** The store URI for {@code atoll manager --store}. */
  public String uri() {
    return kind + "://127.0.0.1:" + port;
  }

  /** The server's process id. */
  public long pid() {
    return process.pid();
  }

  /** Stops the server's process (SIGSTOP): connections stay open, nothing answers. */
  public void pause() {
    signal("STOP");
    stopped = true;
  }

  /** Lets a paused server run again (SIGCONT). */
  public void resume() {
    signal("CONT");
    stopped = false;
  }

  private void signal(String name) {
    try {
      Process k = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
      if (!k.waitFor(5, TimeUnit.SECONDS) || k.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new IllegalStateException("kill -" + name + " " + process.pid() + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Kills the server (SIGKILL) and waits until it is gone; {@link #startAgain()} brings it back. */
  public void kill() {
    stop(true);
  }

  /** Starts the server again on the same port and data, after {@link #kill()}. */
  public void startAgain() throws IOException {
    run();
  }

  /** Kills the server (SIGKILL) and starts it again on the same port and data. */
  public void restart() throws IOException {
    stop(true);
    run();
  }

  private void stop(boolean kill) {
    if (process == null) {
      return;
    }
    if (stopped) {
      resume(); // a stopped process does not act on SIGTERM
    }
    if (kill) {
      process.destroyForcibly();
    } else {
      process.destroy();
    }
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops the server (SIGTERM, so that it flushes what it persists). */
  @Override
  public void close() {
    stop(false);
    process = null;
  }
}
