package io.atoll.manager;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The log lines a test makes, for the lines operators act on. The tests' logger (slf4j-simple)
 * writes each line to the {@code System.err} of that moment, so while this is open the lines are
 * also kept here. Tests in this module run one at a time in one JVM.
 */
final class LogLines implements AutoCloseable {

  private final PrintStream original = System.err;
  private final ByteArrayOutputStream kept = new ByteArrayOutputStream();

  LogLines() {
    OutputStream both = new OutputStream() {
      @Override
      public void write(int b) {
        original.write(b);
        kept.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        original.write(b, off, len);
        kept.write(b, off, len);
      }
    };
    System.setErr(new PrintStream(both, true, StandardCharsets.UTF_8));
  }

  /** The messages {@code logger} logged at {@code level} (INFO, WARN, ...) so far, in order. */
  List<String> of(Class<?> logger, String level) {
    return of(logger.getName(), level);
  }

  /** As {@link #of(Class, String)}, for a logger named otherwise. */
  List<String> of(String logger, String level) {
    String marker = " " + level + " " + logger + " - ";
    return Arrays.stream(kept.toString(StandardCharsets.UTF_8).split("\n"))
        .filter(l -> l.contains(marker)).map(l -> l.substring(l.indexOf(marker) + marker.length())).toList();
  }

  @Override
  public void close() {
    System.setErr(original);
  }
}
