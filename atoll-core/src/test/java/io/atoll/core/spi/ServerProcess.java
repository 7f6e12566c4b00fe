package io.atoll.core.spi;

import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Assumptions;

/**
 * A store's server ({@code redis-server}, {@code etcd}, PostgreSQL) run by a test as a real process
 * on 127.0.0.1, with its output in a log file. Started by {@link #redis}, {@link #etcd} or
 * {@link #postgres}, restarted on the same ports and data by {@link #restart}, stopped by
 * {@link #close}.
 *
 * <p>A missing binary fails the test under CI ({@code CI=true}: CI installs the servers, so a
 * missing one is a broken setup) and skips it with the reason elsewhere.
 */
public final class ServerProcess implements AutoCloseable {

  private final List<String> command;
  private final Path log;
  private final int port;
  private final Probe probe;
  /** A directory the server's data lives in that {@link #close} deletes, or null. */
  private Path ownedData;
  private Process process;
  /** Starts on fresh ports after an "address in use", before a start fails the test. */
  static final int START_TRIES = 3;

  private ServerProcess(List<String> command, Path log, int port, Probe probe) {
    this.command = command;
    this.log = log;
    this.port = port;
    this.probe = probe;
  }

  /**
   * Whether the server on a connected socket answers in its own protocol. A connect alone proves
   * nothing: a socket another process holds listening on the port completes the handshake from its
   * backlog without anyone accepting, before our server has even tried (and failed) to bind.
   */
  @FunctionalInterface
  interface Probe {
    boolean answers(Socket s) throws IOException;
  }

  /** Sends {@code request} and reads whether the reply begins with {@code expected}. */
  static Probe replies(String request, String expected) {
    return s -> {
      s.setSoTimeout(500);
      s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      try {
        byte[] reply = s.getInputStream().readNBytes(expected.length());
        return new String(reply, StandardCharsets.US_ASCII).equals(expected);
      } catch (SocketTimeoutException silent) {
        return false;
      }
    };
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
    throw missing(name, debianPackage);
  }

  /** Fails the test under CI, where a missing server is a broken setup, and skips it elsewhere. */
  private static AssertionError missing(String name, String debianPackage) {
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
    return redis(dir, ServerProcess::freePort);
  }

  /** As {@link #redis(Path)}, on ports drawn from {@code ports} (a test's seam). */
  static ServerProcess redis(Path dir, IntSupplier ports) throws IOException {
    String binary = binary("redis-server", "redis-server");
    Files.createDirectories(dir);
    return onFreePorts(dir.resolve("redis.log"), ports, 1, replies("PING\r\n", "+PONG\r\n"), p -> List.of(binary, "--port", Integer.toString(p[0]),
        "--bind", "127.0.0.1", "--dir", dir.toString(), "--appendonly", "yes", "--appendfsync", "always",
        "--save", "", "--daemonize", "no", "--protected-mode", "yes"));
  }

  /**
   * A single-member {@code etcd} on free loopback ports (client and peer) with its data in
   * {@code dir}; {@link #port()} is the client port.
   */
  public static ServerProcess etcd(Path dir) throws IOException {
    String binary = binary("etcd", "etcd-server");
    Files.createDirectories(dir);
    return onFreePorts(dir.resolve("etcd.log"), ServerProcess::freePort, 2,
        replies("GET /health HTTP/1.0\r\n\r\n", "HTTP/1."), p -> {
      String clientUrl = "http://127.0.0.1:" + p[0];
      String peerUrl = "http://127.0.0.1:" + p[1];
      return List.of(binary, "--name", "atoll", "--data-dir", dir.resolve("data").toString(),
          "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
          "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
          "--initial-cluster", "atoll=" + peerUrl, "--initial-cluster-state", "new",
          // a short election timeout makes etcd's smallest lease 1 s instead of 2 s
          "--heartbeat-interval", "50", "--election-timeout", "500");
    });
  }

  /**
   * A PostgreSQL server (Debian's {@code postgresql}, the newest version under
   * {@code /usr/lib/postgresql}) on a free loopback port, its log in {@code dir}. Its data is
   * initialized by {@code initdb} in a fresh directory of the system's temporary directory, deleted
   * by {@link #close}: PostgreSQL refuses to run as root, so when the test runs as root the
   * directory belongs to the {@code postgres} user and the server runs as that user (the test's own
   * directories are closed to others). The superuser is {@code atoll}, trusted without a password
   * on 127.0.0.1; connect to database {@code postgres}.
   */
  public static ServerProcess postgres(Path dir) throws IOException {
    Path bin = postgresBinaries();
    Files.createDirectories(dir);
    Path data = Files.createTempDirectory("atoll-postgres-");
    boolean root = "root".equals(System.getProperty("user.name"));
    List<String> asPostgres = root
        ? List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--")
        : List.of();
    if (root) {
      Files.setOwner(data, data.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres"));
    }
    Path log = dir.resolve("postgres.log");
    List<String> initdb = new java.util.ArrayList<>(asPostgres);
    initdb.addAll(List.of(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", "atoll", "--auth=trust",
        "-E", "UTF8", "--no-sync"));
    try {
      Process p = new ProcessBuilder(initdb).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
      if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        fail("initdb failed; see " + log + ":\n" + Files.readString(log));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while initdb ran", e);
    }
    // The SSLRequest packet: a server answers 'N' (no TLS) before anything else.
    Probe sslRequest = s -> {
      s.setSoTimeout(500);
      s.getOutputStream().write(new byte[] {0, 0, 0, 8, 4, (byte) 0xd2, 0x16, 0x2f});
      s.getOutputStream().flush();
      try {
        return s.getInputStream().read() == 'N';
      } catch (SocketTimeoutException silent) {
        return false;
      }
    };
    ServerProcess server = onFreePorts(log, ServerProcess::freePort, 1, sslRequest, p -> {
      List<String> c = new java.util.ArrayList<>(asPostgres);
      c.addAll(List.of(bin.resolve("postgres").toString(), "-D", data.toString(), "-p", Integer.toString(p[0]),
          "-c", "listen_addresses=127.0.0.1", "-k", data.toString(), "-c", "max_connections=50"));
      return c;
    });
    server.ownedData = data;
    return server;
  }

  /** The {@code bin} directory of the newest PostgreSQL installed by Debian's packages. */
  private static Path postgresBinaries() throws IOException {
    Path root = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(root)) {
      try (var versions = Files.list(root)) {
        var newest = versions.filter(v -> Files.isExecutable(v.resolve("bin/initdb")))
            .max(java.util.Comparator.comparingInt(v -> v.getFileName().toString().matches("\\d+")
                ? Integer.parseInt(v.getFileName().toString()) : -1));
        if (newest.isPresent()) {
          return newest.get().resolve("bin");
        }
      }
    }
    throw missing("PostgreSQL (" + root + "/<version>/bin/initdb)", "postgresql");
  }

  /**
   * Starts a server on {@code count} ports drawn from {@code ports} (the first is the one it is
   * reached on). A port found free may be taken by another process before the server binds it
   * (tests run side by side); a server that exits at start saying its address is in use is
   * started again on other ports, up to {@link #START_TRIES} times.
   */
  private static ServerProcess onFreePorts(Path log, IntSupplier ports, int count, Probe probe,
      Function<int[], List<String>> command) {
    for (int attempt = 1; ; attempt++) {
      int[] p = new int[count];
      for (int i = 0; i < count; i++) {
        p[i] = ports.getAsInt();
      }
      ServerProcess s = new ServerProcess(List.copyOf(command.apply(p)), log, p[0], probe);
      if (s.run(attempt < START_TRIES)) {
        return s;
      }
    }
  }

  private void run() {
    run(false);
  }

  /**
   * Starts the process and waits until it answers its probe on its port.
   *
   * @param mayRetry whether to return false, rather than fail, when the server exits at start
   *     because its address is in use
   * @return whether the server started (always true unless {@code mayRetry})
   */
  private boolean run(boolean mayRetry) {
    long logStart;
    try {
      logStart = Files.exists(log) ? Files.size(log) : 0;
      process = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + command + ": " + e, e);
    }
    boolean[] inUse = new boolean[1];
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
      if (!process.isAlive()) {
        process.waitFor();
        String output = Files.readString(log);
        String started = output.substring((int) Math.min(logStart, output.length()));
        if (mayRetry && started.toLowerCase(java.util.Locale.ROOT).contains("address already in use")) {
          inUse[0] = true;
          return true;
        }
        fail(command.getFirst() + " exited with " + process.exitValue() + " at start; see " + log + ":\n" + started);
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return probe.answers(s);
      } catch (IOException e) {
        return false;
      }
    });
    return !inUse[0];
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
    if (ownedData != null) {
      try (var files = Files.walk(ownedData)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      } catch (IOException ignored) {
        // a temporary directory left behind
      }
    }
  }
}
