package io.atoll.server.demo;

import io.atoll.testkit.process.ProcessSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * How the demo and the process tests start an {@code atoll} command as its own process on the
 * testkit's process harness: same JDK as found by {@link io.atoll.testkit.process.JavaBinary},
 * a small heap, the class path of this process (or of the packaged jar, which tests name with the
 * property {@code atoll.child.classpath}). Each such process announces its address with a line
 * "... listening on HOST:PORT". More JVM options for every such process (a profiler, say) come from
 * the property {@code atoll.child.jvm-options}, separated by spaces, e.g.
 * {@code ATOLL_JAVA_OPTS='-Datoll.child.jvm-options=-XX:StartFlightRecording:filename=/tmp/%p.jfr'}.
 * When the {@code atoll} script recorded a class-data archive for its jar (property
 * {@code atoll.cds.archive}), children on the same class path use it.
 */
public final class AtollProcesses {

  private AtollProcesses() {}

  /** {@code atoll <args>} as a process named {@code name} (its log is {@code <name>.log}). */
  public static ProcessSpec atoll(String name, List<String> args) {
    return ProcessSpec.builder(name, "io.atoll.server.Main")
        .classpath(System.getProperty("atoll.child.classpath", System.getProperty("java.class.path")))
        .jvmOptions(childOptions())
        .args(args)
        .build();
  }

  private static List<String> childOptions() {
    List<String> out = new ArrayList<>();
    // The class-data archive the atoll script recorded for its jar: a child on the same class
    // path starts faster (a pod in about half the time) (one that does not match is ignored, silently).
    String archive = System.getProperty("atoll.cds.archive", "");
    if (!archive.isEmpty() && java.nio.file.Files.isRegularFile(Path.of(archive))
        && System.getProperty("atoll.child.classpath") == null) {
      out.addAll(List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off", "-XX:SharedArchiveFile=" + archive));
    }
    String options = System.getProperty("atoll.child.jvm-options", "").trim();
    if (!options.isEmpty()) {
      out.addAll(List.of(options.split("\\s+")));
    }
    return out;
  }

  /**
   * A shard manager as the demo and the chaos run start it: on {@code port} (0 for any), its state
   * in {@code dataDir}, with a lease margin of a tenth of the lease (at least one second), short retry
   * and ping times, and {@code extra} arguments last.
   */
  public static ProcessSpec manager(String name, int port, Path dataDir, int shards, Duration lease,
      String... extra) {
    return manager(name, port, dataDir, shards, lease, Duration.ofMillis(Math.max(1000, lease.toMillis() / 10)), extra);
  }

  /** As {@link #manager(String, int, Path, int, Duration, String...)}, with the lease margin {@code margin}. */
  public static ProcessSpec manager(String name, int port, Path dataDir, int shards, Duration lease, Duration margin,
      String... extra) {
    List<String> args = new ArrayList<>(List.of("manager", "--port", Integer.toString(port), "--data-dir",
        dataDir.toString(), "--shards", Integer.toString(shards), "--lease", lease.toMillis() + "ms",
        "--lease-margin", margin.toMillis() + "ms", "--rebalance-interval", "10s",
        "--rebalance-retry", "2s", "--termination-timeout", "2s", "--ping-timeout", "1s"));
    args.addAll(List.of(extra));
    return atoll(name, args);
  }

  /**
   * A pod of the demo service reaching the manager at {@code manager} and the accounts database at
   * {@code dbUrl}, with more arguments {@code extra} (port, advertised address, version).
   */
  public static ProcessSpec pod(String name, String manager, String dbUrl, List<String> extra) {
    List<String> args = new ArrayList<>(List.of("pod", "--manager", manager, "--db", dbUrl,
        "--termination-timeout", "2s"));
    args.addAll(extra);
    return atoll(name, args);
  }
}
