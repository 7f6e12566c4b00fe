package io.atoll.testkit.process;

import io.atoll.testkit.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * A group of real processes on this machine, started from {@link ProcessSpec}s with their logs in
 * one directory, and stopped together: the harness behind Atoll's process tests, its demo and its
 * cluster load generator. It knows nothing of Atoll's commands; callers say what to run.
 *
 * <pre>{@code
 * try (ProcessCluster cluster = new ProcessCluster(dir)) {
 *   ManagedProcess manager = cluster.start(ProcessSpec.builder("manager", "io.atoll.server.Main")
 *       .args("manager", "--port", "0").build());
 *   PodAddress address = manager.awaitAddress(Duration.ofSeconds(60));
 *   ...
 *   manager.kill();
 * }
 * }</pre>
 *
 * {@link #close()} thaws what is frozen, asks everything to stop (SIGTERM), and kills (SIGKILL)
 * what has not exited after the grace period. Thread-safe.
 */
public final class ProcessCluster implements AutoCloseable {

  private final Path dir;
  private final Duration grace;
  private final Map<String, ManagedProcess> processes = new LinkedHashMap<>();

  /** A cluster logging to {@code dir}, with a 10 s grace period on close. */
  public ProcessCluster(Path dir) {
    this(dir, Duration.ofSeconds(10));
  }

  /**
   * A cluster logging to {@code dir}; {@link #close()} waits up to {@code grace} for graceful
   * stops before it kills.
   */
  public ProcessCluster(Path dir, Duration grace) {
    this.dir = Objects.requireNonNull(dir, "dir");
    if (grace.isNegative()) {
      throw new IllegalArgumentException("grace: " + grace + " (expected: >= 0)");
    }
    this.grace = grace;
  }

  /** Where logs go. */
  public Path dir() {
    return dir;
  }

  /**
   * Starts a process from {@code spec}; does not wait for it to be ready.
   *
   * @throws IllegalArgumentException if a process of that name was started before
   * @throws UncheckedIOException if it cannot be started
   */
  public synchronized ManagedProcess start(ProcessSpec spec) {
    if (processes.containsKey(spec.name())) {
      throw new IllegalArgumentException("process name: " + spec.name() + " (expected: unique in this cluster; "
          + "its log would be overwritten)");
    }
    try {
      ManagedProcess p = ManagedProcess.start(spec, dir);
      processes.put(spec.name(), p);
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + spec.name() + ": " + spec.command(), e);
    }
  }

  /** The process named {@code name}. @throws IllegalArgumentException if there is none */
  public synchronized ManagedProcess get(String name) {
    ManagedProcess p = processes.get(name);
    if (p == null) {
      throw new IllegalArgumentException("process name: " + name + " (expected: one of " + processes.keySet() + ")");
    }
    return p;
  }

  /** Every process started, running or not, in start order. */
  public synchronized List<ManagedProcess> processes() {
    return List.copyOf(processes.values());
  }

  /**
   * Waits for {@code condition}; on timeout the error lists every process's state and log.
   *
   * @throws Await.ConditionTimeoutException if it does not hold within {@code timeout}
   */
  public void await(String what, Duration timeout, BooleanSupplier condition) {
    try {
      Await.until(what, timeout, condition);
    } catch (Await.ConditionTimeoutException e) {
      StringBuilder b = new StringBuilder(e.getMessage()).append("; processes:");
      for (ManagedProcess p : processes()) {
        b.append("\n  ").append(p).append(", log ").append(p.log());
      }
      throw new Await.ConditionTimeoutException(b.toString(), e);
    }
  }

  /** Asks every running process to stop (SIGTERM) without waiting; safe in a shutdown hook. */
  public void terminateAll() {
    for (ManagedProcess p : processes()) {
      if (p.isAlive()) {
        p.terminate();
      }
    }
  }

  /**
   * Runs {@code body} with a shutdown hook that asks every process to stop if this JVM is stopped
   * meanwhile (Ctrl-C), so no child outlives a run that was interrupted; the hook is removed when
   * {@code body} ends.
   */
  public <T> T withShutdownHook(java.util.concurrent.Callable<T> body) throws Exception {
    Thread hook = new Thread(this::terminateAll);
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      return body.call();
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // shutting down already: the hook runs
      }
    }
  }

  /** Stops every process: SIGTERM, then SIGKILL for those still running after the grace period. */
  @Override
  public void close() {
    List<ManagedProcess> all = processes();
    terminateAll();
    long deadline = System.nanoTime() + grace.toNanos();
    for (ManagedProcess p : all) {
      long left = Math.max(0, deadline - System.nanoTime());
      if (p.awaitExit(Duration.ofNanos(left)).isEmpty()) {
        p.killWithDescendants();
      }
    }
    for (ManagedProcess p : all) {
      p.awaitExit(Duration.ofSeconds(10));
    }
  }
}
