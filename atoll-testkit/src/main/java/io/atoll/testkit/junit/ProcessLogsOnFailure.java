package io.atoll.testkit.junit;

import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Prints the end of every process log of a test when it fails, before its temporary directory
 * (where {@link io.atoll.testkit.process.ProcessCluster} writes the logs) is deleted: a process
 * test that fails once on a build machine then says what the manager and the pods did.
 *
 * <pre>{@code
 * @TempDir
 * Path dir;
 * @RegisterExtension
 * final ProcessLogsOnFailure logs = new ProcessLogsOnFailure(() -> dir);
 * }</pre>
 *
 * It reads the {@code *.log} files under the directory (three levels down at most), in name
 * order, at most {@value #MAX_LOGS} of them. Given the test's {@link ProcessCluster} too, it first
 * has each process that still runs write the stacks of all its threads, virtual ones included,
 * beside its log ({@code NAME.threads}, see {@link ManagedProcess#threadDump}), and prints those.
 */
public final class ProcessLogsOnFailure implements AfterTestExecutionCallback {

  /** How much of each log is printed, from its end. */
  static final int TAIL_CHARS = 48 * 1024;
  /** How much of each thread dump is printed, from its end. */
  static final int DUMP_CHARS = 256 * 1024;
  /** How many logs are printed at most. */
  static final int MAX_LOGS = 16;

  private final Supplier<Path> dir;
  private final Supplier<ProcessCluster> processes;

  /** @param dir the directory the test's processes log to, read when a test fails */
  public ProcessLogsOnFailure(Supplier<Path> dir) {
    this(dir, () -> null);
  }

  /**
   * @param dir the directory the test's processes log to, read when a test fails
   * @param processes the test's processes (null: none started), asked for thread dumps then
   */
  public ProcessLogsOnFailure(Supplier<Path> dir, Supplier<ProcessCluster> processes) {
    this.dir = Objects.requireNonNull(dir, "dir");
    this.processes = Objects.requireNonNull(processes, "processes");
  }

  @Override
  public void afterTestExecution(ExtensionContext context) {
    Path logs = dir.get();
    if (context.getExecutionException().isEmpty() || logs == null || !Files.isDirectory(logs)) {
      return;
    }
    ProcessCluster cluster = processes.get();
    if (cluster != null) {
      for (ManagedProcess p : cluster.processes()) {
        p.threadDump(logs.resolve(p.name() + ".threads"), Duration.ofSeconds(10));
      }
    }
    System.out.println(report(context.getDisplayName(), logs, TAIL_CHARS));
  }

  /**
   * What is printed when {@code test} failed: the last {@code tailChars} characters of each log
   * under {@code dir}.
   */
  static String report(String test, Path dir, int tailChars) {
    List<Path> files;
    try (Stream<Path> found = Files.find(dir, 3, (p, a) -> a.isRegularFile()
        && (p.toString().endsWith(".log") || p.toString().endsWith(".threads")))) {
      files = found.sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the logs under " + dir, e);
    }
    StringBuilder b = new StringBuilder();
    b.append("---- ").append(test).append(" failed: the end of each process log under ").append(dir).append(" ----\n");
    for (Path f : files.subList(0, Math.min(files.size(), MAX_LOGS))) {
      int chars = f.toString().endsWith(".threads") ? Math.max(tailChars, DUMP_CHARS) : tailChars;
      b.append("---- ").append(dir.relativize(f)).append(" ----\n").append(tail(f, chars)).append('\n');
    }
    if (files.size() > MAX_LOGS) {
      b.append("---- ").append(files.size() - MAX_LOGS).append(" more logs not printed ----\n");
    }
    return b.append("---- end of the logs ----").toString();
  }

  private static String tail(Path file, int chars) {
    try {
      String text = Files.readString(file, StandardCharsets.UTF_8);
      return text.length() > chars ? text.substring(text.length() - chars) : text;
    } catch (IOException | UncheckedIOException e) {
      return "(cannot be read: " + e + ")";
    }
  }
}
