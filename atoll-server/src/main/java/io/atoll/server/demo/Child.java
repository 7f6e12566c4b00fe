package io.atoll.server.demo;

import io.atoll.core.PodAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code atoll} process started by the demo (or by a test harness): same JDK and class path as
 * this process, a small heap, output to a log file. It announces its address with a line
 * "... listening on HOST:PORT".
 */
public final class Child {

  private static final Pattern LISTENING = Pattern.compile("listening on (\\S+:\\d+)");

  /** The process's name, e.g. "pod-2". */
  public final String name;
  /** Its log file. */
  public final Path log;
  private final Process process;

  private Child(String name, Path log, Process process) {
    this.name = name;
    this.log = log;
    this.process = process;
  }

  /** Starts {@code atoll <args>} as a new process logging to {@code dir/name.log}. */
  public static Child start(String name, Path dir, List<String> args) throws IOException {
    Files.createDirectories(dir);
    Path log = dir.resolve(name + ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse(
        Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.add("-Xmx256m");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("--add-opens=java.base/java.lang.invoke=ALL-UNNAMED");
    cmd.add("--enable-native-access=ALL-UNNAMED"); // Netty's native transport
    if (Runtime.version().feature() >= 23) {
      cmd.add("--sun-misc-unsafe-memory-access=allow"); // Netty still uses sun.misc.Unsafe; quiet the JDK 24+ warning
    }
    cmd.add("-cp");
    // Tests run from a class path of their own; they point children at the packaged jar.
    cmd.add(System.getProperty("atoll.child.classpath", System.getProperty("java.class.path")));
    cmd.add("io.atoll.server.Main");
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new Child(name, log, p);
  }

  /**
   * Waits for the process to announce its address.
   *
   * @throws IllegalStateException if it exits or stays silent, quoting the end of its log
   */
  public PodAddress awaitAddress(Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (;;) {
      String text = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
      Matcher m = LISTENING.matcher(text);
      if (m.find()) {
        return PodAddress.parse(m.group(1));
      }
      if (!process.isAlive() || System.nanoTime() - deadline > 0) {
        String tail = text.length() > 2000 ? text.substring(text.length() - 2000) : text;
        throw new IllegalStateException(name + (process.isAlive() ? " did not start within " + timeout.toSeconds()
            + " s" : " exited with code " + process.exitValue()) + "; its log " + log + " ends with:\n" + tail);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // polling a log file for a line
    }
  }

  /** Its address if it has announced it yet, else null; never waits. */
  public PodAddress addressIfUp() throws IOException {
    Matcher m = LISTENING.matcher(logText());
    return m.find() ? PodAddress.parse(m.group(1)) : null;
  }

  /** Asks it to stop gracefully (SIGTERM). */
  public void terminate() {
    process.destroy();
  }

  /** Kills it at once (SIGKILL). */
  public void kill() {
    process.destroyForcibly();
  }

  /** Freezes it (SIGSTOP). */
  public void pause() throws IOException, InterruptedException {
    signal("STOP");
  }

  /** Thaws it (SIGCONT). */
  public void resume() throws IOException, InterruptedException {
    signal("CONT");
  }

  private void signal(String sig) throws IOException, InterruptedException {
    int rc = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start().waitFor();
    if (rc != 0) {
      throw new IOException("kill -" + sig + " " + process.pid() + " failed with " + rc);
    }
  }

  /** Waits for it to exit; returns its code, or -1 if it is still running at the timeout. */
  public int awaitExit(Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
  }

  /** Whether it still runs. */
  public boolean isAlive() {
    return process.isAlive();
  }

  /** Its process id. */
  public long pid() {
    return process.pid();
  }

  /** Its log so far. */
  public String logText() throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }
}
