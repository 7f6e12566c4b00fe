package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line: durations, the flag > env > file > default order, and clear errors. */
class CliTest {

  @TempDir
  Path dir;
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private PrintStream oldErr;
  private PrintStream oldOut;

  @BeforeEach
  void capture() {
    oldErr = System.err;
    oldOut = System.out;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restore() {
    System.setErr(oldErr);
    System.setOut(oldOut);
  }

  private String errText() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void durationsReadTheUsualForms() {
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("3s")).isEqualTo(Duration.ofSeconds(3));
    assertThat(Durations.parse("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Durations.parse("PT1.5S")).isEqualTo(Duration.ofMillis(1500));
    assertThatThrownBy(() -> Durations.parse("soon")).isInstanceOf(CommandLine.TypeConversionException.class)
        .hasMessageContaining("'soon' is not a duration (expected: a number with ms, s, m or h");
  }

  @Test
  void aBadFlagValueStopsTheStartNamingTheOption() {
    int code = Main.run(new String[] {"manager", "--lease", "forever", "--data-dir", dir.toString()}, Map.of());
    assertThat(code).isEqualTo(2);
    assertThat(errText()).contains("--lease").contains("'forever' is not a duration");
  }

  @Test
  void aLeaseMarginOfZeroIsRefused() {
    int code = Main.run(new String[] {"manager", "--lease-margin", "0s", "--data-dir", dir.toString()}, Map.of());
    assertThat(code).isEqualTo(2);
    assertThat(errText()).contains("lease-margin: 0 ms (expected: >= 500 ms");
  }

  @Test
  void aManagerOnAWildcardAddressMustSayWhereItIsReached() {
    int code = Main.run(new String[] {"manager", "--host", "0.0.0.0", "--insecure", "--data-dir", dir.toString()},
        Map.of());
    assertThat(code).isEqualTo(2);
    assertThat(errText()).contains("--host 0.0.0.0 listens on every address").contains("--advertise HOST");
    assertThat(Main.run(new String[] {"manager", "--advertise", "::", "--data-dir", dir.toString()}, Map.of()))
        .isEqualTo(2);
    assertThat(errText()).contains("--advertise :: is every address");
  }

  @Test
  void theDefaultDataDirIsAbsolute() {
    ManagerCommand m = new ManagerCommand();
    new CommandLine(m).registerConverter(Duration.class, new Durations()).parseArgs();
    assertThat(m.dataDir.isAbsolute()).as(m.dataDir.toString()).isTrue();
    assertThat(m.dataDir).isEqualTo(Path.of(System.getProperty("user.home"), ".atoll", "manager"));
  }

  @Test
  void aMalformedStoreStopsTheStartWithTheExpectedForms() {
    assertThat(Main.run(new String[] {"manager", "--store", "zookeeper://h:1"}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--store: 'zookeeper://h:1'").contains("etcd://host:port").contains("redis://");
    assertThat(Main.run(new String[] {"manager", "--store", "etcd://h:port"}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("etcd store: port 'port'");
    assertThat(Main.run(new String[] {"manager", "--store", "redis://h:1?colour=red"}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("unknown parameter 'colour'");
    assertThat(Main.run(new String[] {"manager", "--store", "file:"}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("names no directory");
  }

  @Test
  void aStoreThatDoesNotAnswerStopsTheStartNamingIt() throws Exception {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    int code = Main.run(new String[] {"manager", "--port", "0", "--store",
        "redis://127.0.0.1:" + port + "?timeout=1s"}, Map.of());
    assertThat(code).isEqualTo(1);
    assertThat(errText()).contains("cannot start").contains("redis store redis://127.0.0.1:" + port)
        .contains("cannot connect");
  }

  @Test
  void storeSpecsReadEveryForm() {
    assertThat(StoreSpec.parse("file", dir)).isEqualTo(new StoreSpec("file", "file", dir));
    assertThat(StoreSpec.parse("file:/var/atoll", dir).dir()).isEqualTo(Path.of("/var/atoll"));
    assertThat(StoreSpec.parse("etcd://127.0.0.1:2379", dir).kind()).isEqualTo("etcd");
    assertThat(StoreSpec.parse("etcds://a:1,b:2/p", dir).describe()).isEqualTo("etcds://a:1,b:2/p");
    assertThat(StoreSpec.parse("rediss://u:pw@h:6380", dir).describe()).isEqualTo("rediss://u@h:6380/0 (prefix atoll)");
  }

  @Test
  void anOutOfRangeSettingStopsTheStartWithTheExpectedRange() {
    int code = Main.run(new String[] {"manager", "--shards", "0", "--data-dir", dir.toString()}, Map.of());
    assertThat(code).isEqualTo(2);
    assertThat(errText()).contains("shards: 0 (expected: 1..65536)");
  }

  @Test
  void anUnknownKeyInTheConfigFileStopsTheStartListingTheValidKeys() throws Exception {
    Path file = dir.resolve("atoll.properties");
    Files.writeString(file, "lease=5s\nleese-margin=1s\n");
    int code = Main.run(new String[] {"manager", "--config", file.toString()}, Map.of());
    assertThat(code).isEqualTo(2);
    assertThat(errText()).contains("unknown key(s) [leese-margin]").contains("lease-margin");
  }

  @Test
  void theFlagWinsOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverTheDefault() throws Exception {
    Path file = dir.resolve("atoll.properties");
    Files.writeString(file, "shards=0\nlease=7s\n");
    // The file says 0 shards (invalid), the environment says 5, the flag says 0 again (invalid):
    // which one is used shows in the error, or in the lack of one.
    int fromFile = Main.run(new String[] {"manager", "--config", file.toString(), "--data-dir",
        dir.resolve("a").toString(), "--port", "-1"}, Map.of());
    assertThat(fromFile).isEqualTo(2);
    assertThat(errText()).contains("shards: 0");
    err.reset();
    int fromEnvOverFile = Main.run(new String[] {"manager", "--config", file.toString(), "--data-dir",
        dir.resolve("b").toString(), "--lease", "100ms"}, Map.of("ATOLL_SHARDS", "5"));
    assertThat(fromEnvOverFile).isEqualTo(2);
    assertThat(errText()).doesNotContain("shards: 0").contains("lease-ttl: 100 ms (expected: >= 300 ms)");
    err.reset();
    int fromFlagOverEnv = Main.run(new String[] {"manager", "--shards", "0", "--data-dir",
        dir.resolve("c").toString()}, Map.of("ATOLL_SHARDS", "5"));
    assertThat(fromFlagOverEnv).isEqualTo(2);
    assertThat(errText()).contains("shards: 0");
  }

  @Test
  void statusOfAManagerThatIsNotThereSaysSo() {
    int code = Main.run(new String[] {"status", "--manager", "127.0.0.1:1", "--timeout", "1s"}, Map.of());
    assertThat(code).isEqualTo(1);
    assertThat(errText()).contains("the shard manager at 127.0.0.1:1 did not answer");
  }

  @Test
  void demoRefusesNonsenseBeforeStartingAnything() {
    assertThat(Main.run(new String[] {"demo", "--pods", "1"}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--pods 1 (expected: 2..8)");
  }

  @Test
  void kvRefusesBadSizesAndPortsBeforeStartingAnything() {
    assertThat(Main.run(new String[] {"kv", "--port", "7001", "--maxmemory", "lots", "--data-dir", dir.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--maxmemory: 'lots' (expected: a size such as 0, 100mb or 2gb)");
    assertThat(Main.run(new String[] {"kv", "--port", "70000", "--data-dir", dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("port: 70000 (expected: 0..65535)");
    assertThat(KvCommand.bytes("--maxmemory", "2gb")).isEqualTo(2L << 30);
    assertThat(KvCommand.bytes("--maxmemory", "100m")).isEqualTo(100_000_000L);
  }
}
