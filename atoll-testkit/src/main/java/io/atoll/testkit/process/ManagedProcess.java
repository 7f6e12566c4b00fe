package io.atoll.testkit.process;

import io.atoll.core.PodAddress;
import io.atoll.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One process started by a {@link ProcessCluster}: its output (stdout and stderr) goes to a log
 * file, and it can be stopped gracefully (SIGTERM), killed (SIGKILL), frozen (SIGSTOP) and thawed
 * (SIGCONT). Atoll processes announce their address with a line "... listening on HOST:PORT",
 * which {@link #awaitAddress} waits for. Thread-safe.
 */
public final class ManagedProcess {

  private static final Pattern LISTENING = Pattern.compile("listening on (\\S+:\\d+)");

  private final ProcessSpec spec;
  private final Path log;
  private final Process process;
  private volatile boolean paused;

  private ManagedProcess(ProcessSpec spec, Path log, Process process) {
    this.spec = spec;
    this.log = log;
    this.process = process;
  }

  static ManagedProcess start(ProcessSpec spec, Path dir) throws IOException {
    Files.createDirectories(dir);
    Path log = dir.resolve(spec.name() + ".log");
    Process p = new ProcessBuilder(spec.command()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new ManagedProcess(spec, log, p);
  }

  /** Its name, e.g. "pod-2". */
  public String name() {
    return spec.name();
  }

  /** What it was started from. */
  public ProcessSpec spec() {
    return spec;
  }

  /** Its log file. */
  public Path log() {
    return log;
  }

  /** Its process id. */
  public long pid() {
    return process.pid();
  }

  /** Whether it still runs (a frozen process runs). */
  public boolean isAlive() {
    return process.isAlive();
  }

  /** Whether it is frozen by {@link #pause()} and not yet thawed. */
  public boolean isPaused() {
    return paused && process.isAlive();
  }

  /** Its log so far. @throws UncheckedIOException if the log cannot be read */
  public String logText() {
    try {
      return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + log, e);
    }
  }

  /** The last {@code chars} characters of its log, for error messages. */
  public String logTail(int chars) {
    String text = logText();
    return text.length() > chars ? text.substring(text.length() - chars) : text;
  }

  /**
   * Waits for {@code pattern} to appear in its log and returns the first match's group 1 (the
   * whole match if it has no group).
   *
   * @throws IllegalStateException if the process exits first or the timeout passes, quoting the
   *     end of its log
   */
  public String awaitLog(Pattern pattern, Duration timeout) {
    String[] found = new String[1];
    try {
      Await.until(name() + " logging /" + pattern + "/", timeout, () -> {
        Matcher m = pattern.matcher(logText());
        if (m.find()) {
          found[0] = m.groupCount() >= 1 ? m.group(1) : m.group();
          return true;
        }
        if (!process.isAlive()) {
          throw new IllegalStateException(describe("exited with code " + process.exitValue()
              + " before logging /" + pattern + "/"));
        }
        return false;
      });
    } catch (Await.ConditionTimeoutException e) {
      throw new IllegalStateException(describe("did not log /" + pattern + "/ within " + timeout.toMillis() + " ms"),
          e);
    }
    return found[0];
  }

  /** Waits for its "listening on HOST:PORT" line; see {@link #awaitLog}. */
  public PodAddress awaitAddress(Duration timeout) {
    return PodAddress.parse(awaitLog(LISTENING, timeout));
  }

  /** Its address if it has announced it yet; never waits. */
  public Optional<PodAddress> addressIfUp() {
    Matcher m = LISTENING.matcher(logText());
    return m.find() ? Optional.of(PodAddress.parse(m.group(1))) : Optional.empty();
  }

  /** Asks it to stop gracefully (SIGTERM; a frozen process is thawed first so it can). */
  public void terminate() {
    if (isPaused()) {
      resume();
    }
    process.destroy();
  }

  /** Kills it at once (SIGKILL, kill -9). */
  public void kill() {
    process.destroyForcibly();
  }

  /**
   * Freezes it (SIGSTOP): it keeps its sockets and memory but runs nothing, as a long GC pause or
   * a suspended VM would.
   *
   * @throws IllegalStateException if the signal cannot be sent
   */
  public void pause() {
    signal("STOP");
    paused = true;
  }

  /** Thaws it (SIGCONT). @throws IllegalStateException if the signal cannot be sent */
  public void resume() {
    signal("CONT");
    paused = false;
  }

  /**
   * Writes the stack of every thread of this running Java process, virtual threads included, to
   * {@code file} ({@code jcmd PID Thread.dump_to_file}, with the {@code jcmd} beside the process's
   * {@code java}), without stopping it.
   *
   * @return whether the dump was written within {@code timeout} (false for a process that is not
   *     running, is frozen, or whose JDK has no {@code jcmd})
   */
  public boolean threadDump(Path file, Duration timeout) {
    Path jcmd = spec.java().path().resolveSibling("jcmd");
    if (!isAlive() || isPaused() || !Files.isExecutable(jcmd)) {
      return false;
    }
    try {
      Process p = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.dump_to_file",
          "-overwrite", "-format=text", file.toAbsolutePath().toString()).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0 && Files.exists(file);
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void signal(String sig) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid()))
          .redirectErrorStream(true).start();
      String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + sig + " " + process.pid() + " failed: " + out);
      }
    } catch (IOException e) {
      throw new IllegalStateException("kill -" + sig + " " + process.pid() + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted sending SIG" + sig + " to " + process.pid(), e);
    }
  }

  /**
   * Waits for it to exit and returns its exit code (143 after SIGTERM without a handler that
   * exits 0, 137 after SIGKILL), or empty if it still runs at the timeout.
   */
  public OptionalInt awaitExit(Duration timeout) {
    try {
      return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS) ? OptionalInt.of(process.exitValue())
          : OptionalInt.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return OptionalInt.empty();
    }
  }

  /**
   * Stops it gracefully, and kills it if it has not exited within {@code grace}, with every process
   * it started (a process that starts processes of its own, such as a demo, would otherwise leave
   * them running, orphaned, when it is killed); returns its exit code.
   */
  public int stop(Duration grace) {
    terminate();
    OptionalInt code = awaitExit(grace);
    if (code.isPresent()) {
      return code.getAsInt();
    }
    killWithDescendants();
    return awaitExit(Duration.ofSeconds(10)).orElse(-1);
  }

  /**
   * Kills it (SIGKILL) and every process it started and that still runs: what a harness does to a
   * process that would not stop, so that none of its children is left running, orphaned.
   */
  public void killWithDescendants() {
    // Read before the kill: once it is gone, its children belong to init and are no longer its descendants.
    List<ProcessHandle> descendants = process.descendants().toList();
    kill();
    descendants.forEach(ProcessHandle::destroyForcibly);
  }

  String describe(String what) {
    return name() + " (pid " + pid() + ") " + what + "; its log " + log + " ends with:\n" + logTail(2000);
  }

  @Override
  public String toString() {
    return name() + " (pid " + pid() + (process.isAlive() ? (isPaused() ? ", paused)" : ", running)")
        : ", exited " + process.exitValue() + ")");
  }
}
