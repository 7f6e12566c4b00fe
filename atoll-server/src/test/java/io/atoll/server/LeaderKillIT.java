package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.server.demo.DemoRun;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code atoll demo --store <kind>} for 30 s (real processes: two managers, three pods, the store's
 * server, the accounts database): {@code kill -9} of the leading manager under load, then a pod
 * added, a graceful stop and a pod killed. The standby must lead within 2 × the lease, its first
 * rebalance must give the added pod shards, no acknowledged deposit may be lost, and no account
 * may have two live activations at once (the demo's audit and activation log).
 */
class LeaderKillIT {

  private static final Duration LEASE = Duration.ofSeconds(3);

  @TempDir
  Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"file", "redis"})
  void killingTheLeadingManagerUnderLoadLosesNothing(String store) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code;
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      code = new DemoRun(new DemoRun.Options(Duration.ofSeconds(30), false, 3, 200, 2000, 400, LEASE, 60,
          dir.resolve("run"), store, false), out).run();
    }
    String log = bytes.toString(StandardCharsets.UTF_8);
    System.out.println(log); // the run's story and figures, in the build's output
    assertThat(code).as("the demo's result; its output:%n%s", log).isZero();
    assertThat(log).contains("killing the leading shard manager").contains("the standby leads on")
        .contains("lost                   0").contains("overlapping activations 0");
    Matcher takeover = Pattern.compile("the standby leads on \\S+, (\\d+) ms after the kill").matcher(log);
    assertThat(takeover.find()).isTrue();
    assertThat(Long.parseLong(takeover.group(1))).as("kill -9 to the standby leading")
        .isLessThan(LEASE.multipliedBy(2).toMillis());
    assertThat(log).containsPattern("the new leader's first rebalance gave pod-4 [1-9]\\d* shards");
    // The client follows the new leader's configs to the end: pod-2's shards (killed last) moved.
    Matcher shards = Pattern.compile("\\| shards (.*)").matcher(log);
    String last = null;
    while (shards.find()) {
      last = shards.group(1);
    }
    assertThat(last).as("the client's last view of the shards").isNotNull().doesNotContain("pod-2=");
  }
}
