package io.atoll.testkit.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.atoll.core.PodAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The process harness on a trivial real process: start, freeze, thaw, kill, stop, and failures. */
class ProcessClusterTest {

  @TempDir
  Path dir;
  ProcessCluster cluster;

  @BeforeEach
  void start() {
    cluster = new ProcessCluster(dir, Duration.ofSeconds(2));
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private static ProcessSpec ticking(String name, String... args) {
    return ProcessSpec.builder(name, Ticking.class.getName()).heap("64m").args(args).build();
  }

  private static int ticks(ManagedProcess p) {
    return (int) p.logText().lines().filter(l -> l.startsWith("tick ")).count();
  }

  @Test
  void startsAProcessThatLogsToItsFileAndFreezesThawsAndDiesOnSigkill() {
    ManagedProcess p = cluster.start(ticking("ticker"));
    assertThat(p.awaitAddress(Duration.ofSeconds(30))).isEqualTo(new PodAddress("127.0.0.1", 4242));
    assertThat(p.log()).isEqualTo(dir.resolve("ticker.log"));
    assertThat(p.addressIfUp()).isPresent();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> ticks(p) >= 3);

    p.pause();
    assertThat(p.isPaused()).isTrue();
    int frozenAt = ticks(p);
    Awaitility.await("no ticks while frozen").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
        .until(() -> ticks(p) <= frozenAt + 1); // at most one line was on its way
    assertThat(p.isAlive()).isTrue();

    p.resume();
    assertThat(p.isPaused()).isFalse();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> ticks(p) >= frozenAt + 5);

    p.kill();
    assertThat(p.awaitExit(Duration.ofSeconds(10))).hasValue(137);
    assertThat(p.logText()).doesNotContain("stopping");
  }

  @Test
  void aGracefulStopRunsTheShutdownHooks() {
    ManagedProcess p = cluster.start(ticking("graceful"));
    p.awaitAddress(Duration.ofSeconds(30));
    assertThat(p.stop(Duration.ofSeconds(10))).isEqualTo(143);
    assertThat(p.logText()).contains("stopping");
  }

  @Test
  void aFrozenProcessIsThawedToStopGracefully() {
    ManagedProcess p = cluster.start(ticking("frozen"));
    p.awaitAddress(Duration.ofSeconds(30));
    p.pause();
    assertThat(p.stop(Duration.ofSeconds(10))).isEqualTo(143);
  }

  @Test
  void closeKillsWhatDoesNotStopWithinTheGracePeriod() {
    ManagedProcess p = cluster.start(ticking("stubborn", "stubborn"));
    p.awaitAddress(Duration.ofSeconds(30));
    long t0 = System.nanoTime();
    cluster.close();
    assertThat(p.isAlive()).isFalse();
    assertThat(p.awaitExit(Duration.ZERO)).hasValue(137);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    assertThat(p.logText()).contains("stopping");
  }

  @Test
  void closeKillsTheChildrenOfAProcessItHadToKill() {
    ManagedProcess p = cluster.start(ticking("parent", "parent"));
    long child = Long.parseLong(p.awaitLog(java.util.regex.Pattern.compile("child pid (\\d+)"),
        Duration.ofSeconds(30)));
    assertThat(ProcessHandle.of(child)).hasValueSatisfying(h -> assertThat(h.isAlive()).isTrue());
    cluster.close();
    assertThat(p.isAlive()).isFalse();
    Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> ProcessHandle.of(child).map(h -> !h.isAlive()).orElse(true));
  }

  @Test
  void waitingForAProcessThatExitedSaysHowAndQuotesItsLog() {
    ManagedProcess p = cluster.start(ticking("failing", "fail"));
    assertThatThrownBy(() -> p.awaitAddress(Duration.ofSeconds(30)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("failing").hasMessageContaining("exited with code 3")
        .hasMessageContaining("bad configuration");
  }

  @Test
  void aConditionThatNeverHoldsTimesOutListingTheProcesses() {
    cluster.start(ticking("listed"));
    assertThatThrownBy(() -> cluster.await("the impossible", Duration.ofMillis(200), () -> false))
        .hasMessageContaining("the impossible did not happen within 200 ms").hasMessageContaining("listed (pid");
  }

  @Test
  void namesAreCheckedAndUnique() {
    assertThatThrownBy(() -> ticking("../escape")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("process name: '../escape'");
    cluster.start(ticking("once"));
    assertThatThrownBy(() -> cluster.start(ticking("once"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: unique");
    assertThatThrownBy(() -> cluster.get("nobody")).hasMessageContaining("expected: one of [once]");
  }

  @Test
  void theJavaBinaryIsAJdk21OrNewerAndTheSpecUsesSmallHeaps() {
    JavaBinary java = JavaBinary.find();
    assertThat(Files.isExecutable(java.path())).isTrue();
    assertThat(java.feature()).isGreaterThanOrEqualTo(21);
    ProcessSpec spec = ticking("spec");
    assertThat(spec.command()).startsWith(java.path().toString(), "-Xmx64m").contains("-cp",
        Ticking.class.getName());
    assertThat(ProcessSpec.builder("d", "M").build().jvmOptions()).contains("-Xmx256m");
    assertThatThrownBy(() -> ProcessSpec.builder("d", "M").heap("lots")).hasMessageContaining("expected: e.g. 256m");
  }
}
