package io.atoll.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The real {@code redis-cli} (Debian's redis-tools), run as a process with a deadline. */
final class RedisCliRun {
  private RedisCliRun() {}

  /** Whether redis-cli is installed here (CI's .ci/run installs it). */
  static boolean installed() throws Exception {
    return run(null, "--version").startsWith("redis-cli");
  }

  /**
   * Runs redis-cli with {@code args}, {@code stdin} (or none) on its input; its output and errors,
   * colour codes removed, or "" if it cannot be started. Killed after 120 s.
   */
  static String run(String stdin, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("redis-cli"));
    cmd.addAll(List.of(args));
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      return "";
    }
    if (stdin != null) {
      p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
    return out.replaceAll("\u001B\\[[0-9;]*m", "");
  }
}
