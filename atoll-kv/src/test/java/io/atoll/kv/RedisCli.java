package io.atoll.kv;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/** The real redis-cli (Debian: apt-get install redis-tools), run as a process with a deadline. */
final class RedisCli {
  private RedisCli() {}

  static boolean available() {
    try {
      Process p = new ProcessBuilder("redis-cli", "--version").redirectErrorStream(true).start();
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Skips the calling test, saying why, when redis-cli is not installed here (CI installs it). */
  static void assume() {
    Assumptions.assumeTrue(available(),
        "redis-cli is not installed on this machine: apt-get install redis-tools (CI's .ci/run installs it)");
  }

  /** Runs redis-cli with {@code args} and {@code stdin}; returns its output (stdout and stderr). */
  static String run(String stdin, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add("redis-cli");
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    if (stdin != null) {
      p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    boolean done = p.waitFor(120, TimeUnit.SECONDS);
    if (!done) {
      p.destroyForcibly();
    }
    assertThat(done).as("redis-cli %s finished within 120 s", String.join(" ", args)).isTrue();
    return new String(out, StandardCharsets.UTF_8).replaceAll("\u001B\\[[0-9;]*m", "");
  }
}
