package io.atoll.server;

import io.atoll.server.kvdemo.KvDemoRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll kv-demo}: Atoll KV managed by the shard manager, under load and faults. */
@Command(name = "kv-demo", mixinStandardHelpOptions = true,
    description = {"A shard manager (16384 shards) and three Atoll KV nodes as processes on loopback, under a",
        "verifying Lettuce client: a fourth node joins, one leaves gracefully, one is killed (kill -9).",
        "Ends by reading back every key; exits 1 if an acknowledged write was lost (apart from keys of",
        "the killed node: keys are not replicated) or the slots were not served again in time."})
final class KvDemoCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Option(names = "--duration", defaultValue = "40s",
      description = "How long the load runs (default: ${DEFAULT-VALUE}).")
  Duration duration;

  @Option(names = "--keys", defaultValue = "20000", description = "Keys the client writes (default: ${DEFAULT-VALUE}).")
  int keys;

  @Option(names = "--writers", defaultValue = "8", description = "Client threads (default: ${DEFAULT-VALUE}).")
  int writers;

  @Option(names = "--lease", defaultValue = "3s",
      description = "The nodes' lease (default: ${DEFAULT-VALUE}).")
  Duration lease;

  @Option(names = "--preload", defaultValue = "0", description = "Keys written before the run (not checked), so"
      + " that moves carry data: the benchmark (default: ${DEFAULT-VALUE}).")
  int preload;

  @Option(names = "--join-only", description = "Only a fourth node joining at 1/3 of the run: no leave, no kill (the"
      + " benchmark of a join).")
  boolean joinOnly;

  @Option(names = "--dir", description = "Where logs go (default: a new directory under data/kv-demo).")
  Path dir;

  @Override
  public Integer call() throws Exception {
    if (keys < 1 || keys > 10_000_000 || writers < 1 || writers > 256) {
      System.err.println("atoll kv-demo: --keys " + keys + ", --writers " + writers
          + " (expected: keys 1..10000000, writers 1..256)");
      return 2;
    }
    if (duration.toSeconds() < 10) {
      System.err.println("atoll kv-demo: --duration " + Durations.format(duration) + " (expected: >= 10s)");
      return 2;
    }
    Path where = dir != null ? dir : Path.of("data", "kv-demo",
        LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    if (Files.exists(where) && Files.list(where).findAny().isPresent()) {
      System.err.println("atoll kv-demo: --dir " + where + " is not empty (expected: a new or empty directory)");
      return 2;
    }
    Files.createDirectories(where);
    // The client's reconnect warnings while nodes leave and die would bury the progress lines.
    System.setProperty("org.slf4j.simpleLogger.log.io.lettuce", "error");
    if (preload < 0 || preload > 50_000_000) {
      System.err.println("atoll kv-demo: --preload " + preload + " (expected: 0..50000000)");
      return 2;
    }
    return new KvDemoRun(new KvDemoRun.Options(duration, keys, writers, lease, where.toAbsolutePath(), preload,
        joinOnly), System.out).run();
  }
}
