package io.atoll.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line: durations, the flag > env > file > default order, and clear errors. */
class CliTest {

  @TempDir
  Path dir;
  @org.junit.jupiter.api.extension.RegisterExtension
  final ConsoleCapture console = new ConsoleCapture();
  private final ByteArrayOutputStream err = console.err;
  private final ByteArrayOutputStream out = console.out;

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
    assertThat(Main.run(new String[] {"kv", "--port", "7001", "--min-replicas-to-ack", "17", "--data-dir",
        dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("min-replicas-to-ack: 17 (expected: 0..16)");
    assertThat(Main.run(new String[] {"kv", "--port", "7001", "--replica-ack-timeout", "0", "--data-dir",
        dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("replica ack timeout: 0 ms (expected: 1..3600000)");
    assertThat(Main.run(new String[] {"kv", "--port", "7001", "--min-replicas-to-ack", "-2", "--manager",
        "127.0.0.1:1", "--data-dir", dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("min-replicas-to-ack: -2 (expected: 0..16)");
    assertThat(Main.run(new String[] {"kv", "--port", "7001", "--repl-backlog-size", "1kb", "--data-dir",
        dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("repl-backlog-size: 1024 bytes (expected: 16kb..1gb)");
    assertThat(Main.run(new String[] {"kv", "--port", "7001", "--repl-backlog-size", "lots", "--data-dir",
        dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--repl-backlog-size: 'lots'");
    assertThat(KvCommand.bytes("--maxmemory", "2gb")).isEqualTo(2L << 30);
    assertThat(KvCommand.bytes("--maxmemory", "100m")).isEqualTo(100_000_000L);
  }

  @Test
  void kvWithAManagerRefusesABusPortAndAPortWhoseControlPortIsPastTheRange() {
    // Managed mode has no bus: --bus-port was ignored, and the control port is always port+10000.
    assertThat(Main.run(new String[] {"kv", "--port", "7001", "--bus-port", "17555", "--manager", "127.0.0.1:1",
        "--data-dir", dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--bus-port 17555 with --manager: a managed node has no cluster bus")
        .contains("--port + 10000 = 17001 (expected: no --bus-port with --manager)");
    assertThat(Main.run(new String[] {"kv", "--port", "60000", "--manager", "127.0.0.1:1", "--data-dir",
        dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--port 60000 with --manager: the node listens for the shard manager on --port +"
        + " 10000 = 70000 (expected: --port 0..55535 with --manager)");
  }

  @Test
  void badSpacesStopTheStartNamingTheOptionAndTheExpectedForm() {
    assertThat(Main.run(new String[] {"manager", "--spaces", "default=300,worker", "--data-dir", dir.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("atoll manager: --spaces spaces: 'worker' (expected: role=count");
    err.reset();
    assertThat(Main.run(new String[] {"manager", "--spaces", "default=300,worker=0", "--data-dir", dir.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--spaces space 'worker': count 0");
    err.reset();
    assertThat(Main.run(new String[] {"manager", "--spaces", "web=10,web=20", "--data-dir", dir.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--spaces spaces: role 'web' twice");
    err.reset();
    assertThat(Main.run(new String[] {"manager", "--spaces", "w*rker=10", "--data-dir", dir.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--spaces role: 'w*rker' has '*' at 1");
    err.reset();
    assertThat(Main.run(new String[] {"manager", "--new-space-shards", "-1", "--data-dir", dir.toString()},
        Map.of())).isEqualTo(2);
    assertThat(errText()).contains("atoll manager: new-space-shards: -1 (expected: 0..65536");
  }

  @Test
  void spaceSettingsOverrideTheGlobalAllocationPerSpaceAndFallBackPartByPart() {
    ManagerCommand m = new ManagerCommand();
    new CommandLine(m).registerConverter(Duration.class, new Durations()).parseArgs("--spaces",
        "default=300,worker=100", "--max-moves", "20", "--max-moves-fraction", "0.1", "--space-settings",
        "worker:max-moves=1,strategy=least-shard", "--space-settings", "default:max-moves-fraction=0.5;batch:max-moves=3");
    io.atoll.manager.ManagerSettings settings = m.settings();
    assertThat(settings.allocation("worker").limits()).isEqualTo(new io.atoll.core.allocation.RebalanceLimits(1, 0.1));
    assertThat(settings.allocation("worker").strategy().getClass())
        .isEqualTo(io.atoll.core.allocation.AllocationStrategy.leastShard().getClass());
    assertThat(settings.allocation("").limits()).isEqualTo(new io.atoll.core.allocation.RebalanceLimits(20, 0.5));
    assertThat(settings.allocation("").strategy().getClass())
        .isEqualTo(io.atoll.core.allocation.AllocationStrategy.versionAware().getClass());
    assertThat(settings.allocation("batch").limits().absolute()).as("a role without a space yet").isEqualTo(3);
    assertThat(settings.allocation("other").limits()).isEqualTo(new io.atoll.core.allocation.RebalanceLimits(20, 0.1));
    ManagerCommand fromEnv = new ManagerCommand();
    new CommandLine(fromEnv).registerConverter(Duration.class, new Durations())
        .setDefaultValueProvider(new ConfigSource(Map.of("ATOLL_SPACE_SETTINGS", "worker:max-moves=2;default:max-moves=4"),
            null)).parseArgs();
    assertThat(fromEnv.settings().allocation("worker").limits().absolute()).isEqualTo(2);
    assertThat(fromEnv.settings().allocation("").limits().absolute()).isEqualTo(4);
  }

  @Test
  void badSpaceSettingsStopTheStartSayingWhatWasGotAndWhatIsExpected() {
    String[][] cases = {
        {"worker", "--space-settings 'worker' has no ':' after a role (expected: ROLE:KEY=VALUE"},
        {":max-moves=1", "--space-settings ':max-moves=1': an empty role (expected: a role, or default"},
        {"w*rker:max-moves=1", "--space-settings 'w*rker:max-moves=1': role: 'w*rker' has '*' at 1"},
        {"worker:max-moves", "'max-moves' has no value (expected: ROLE:KEY=VALUE"},
        {"worker:max-moves=", "'max-moves=' has no value"},
        {"worker:max-moves=lots", "max-moves 'lots' is not a whole number (expected: >= 1)"},
        {"worker:max-moves=0", "--space-settings 'worker:max-moves=0': max-moves: 0 (expected: >= 1)"},
        {"worker:max-moves-fraction=1.5", "max-moves-fraction: 1.5 (expected: > 0 and <= 1)"},
        {"worker:max-moves-fraction=half", "max-moves-fraction 'half' is not a number (expected: > 0 and <= 1)"},
        {"worker:strategy=random", "strategy 'random' (expected: version-aware or least-shard)"},
        {"worker:limit=1", "unknown key 'limit' (expected: max-moves, max-moves-fraction or strategy)"},
        {"worker:max-moves=1,max-moves=2", "max-moves twice (expected: once)"},
        {"worker:max-moves=1;worker:max-moves=2", "--space-settings: role 'worker' twice (expected: each role once)"},
    };
    for (String[] c : cases) {
      err.reset();
      assertThat(Main.run(new String[] {"manager", "--space-settings", c[0], "--data-dir", dir.toString()}, Map.of()))
          .as(c[0]).isEqualTo(2);
      assertThat(errText()).as(c[0]).contains("atoll manager: ").contains(c[1]);
    }
  }

  @Test
  void spacesThatDoNotAddUpToTheShardsAreRefused() {
    assertThat(Main.run(new String[] {"manager", "--shards", "300", "--spaces", "default=300,worker=100",
        "--data-dir", dir.toString()}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("--spaces default=300,worker=100 hold 400 shards but --shards is 300")
        .contains("(expected: --shards 400, or no --shards)");
    err.reset();
    // From the environment too: the conflict is the same wherever --shards comes from.
    assertThat(Main.run(new String[] {"manager", "--spaces", "worker=8", "--data-dir", dir.toString()},
        Map.of("ATOLL_SHARDS", "9"))).isEqualTo(2);
    assertThat(errText()).contains("hold 8 shards but --shards is 9");
  }

  @Test
  void theShardCountIsTheSumOfTheSpacesAndOneDefaultSpaceWithoutThem() {
    ManagerCommand m = new ManagerCommand();
    new CommandLine(m).registerConverter(Duration.class, new Durations())
        .parseArgs("--spaces", "default=300,worker=100");
    io.atoll.core.Spaces layout = m.layout();
    assertThat(layout.size()).isEqualTo(400);
    assertThat(layout.list()).containsExactly(new io.atoll.core.Space("", 0, 300),
        new io.atoll.core.Space("worker", 300, 100));
    ManagerCommand agreeing = new ManagerCommand();
    new CommandLine(agreeing).registerConverter(Duration.class, new Durations())
        .parseArgs("--shards", "400", "--spaces", "default=300,worker=100");
    assertThat(agreeing.layout()).isEqualTo(layout);
    ManagerCommand plain = new ManagerCommand();
    new CommandLine(plain).registerConverter(Duration.class, new Durations()).parseArgs();
    assertThat(plain.layout()).isNull();
    assertThat(plain.shards).isNull(); // the default, 300 shards in one default space, as before
  }

  @Test
  void podRolesAreCheckedAndDefaultNamesTheDefaultRole() {
    assertThat(Main.run(new String[] {"pod", "--manager", "127.0.0.1:1", "--role", "w/x"}, Map.of())).isEqualTo(2);
    assertThat(errText()).contains("atoll pod: --role role: 'w/x' has '/' at 1");
    PodCommand p = new PodCommand();
    new CommandLine(p).registerConverter(Duration.class, new Durations())
        .parseArgs("--manager", "127.0.0.1:1", "--role", "worker", "--role", "default,batch", "--role", "worker");
    assertThat(p.hostedRoles()).containsExactly("worker", "", "batch");
    PodCommand none = new PodCommand();
    new CommandLine(none).registerConverter(Duration.class, new Durations()).parseArgs("--manager", "127.0.0.1:1");
    assertThat(none.hostedRoles()).isEmpty();
  }

  @Test
  void statusShowsShardsPerPodPerSpaceOnlyWhenThereAreSeveralSpaces() {
    io.atoll.core.PodId web = new io.atoll.core.PodId(io.atoll.core.PodAddress.parse("127.0.0.1:7001"), 1);
    io.atoll.core.PodId worker = new io.atoll.core.PodId(io.atoll.core.PodAddress.parse("127.0.0.1:7002"), 1);
    io.atoll.core.ClusterConfig.Builder b = io.atoll.core.ClusterConfig
        .empty(io.atoll.core.Spaces.parse("default=4,worker=2")).toBuilder()
        .pod(new io.atoll.core.PodEntry(new io.atoll.core.Pod(web, io.atoll.core.PodVersion.of("1.0"),
            io.atoll.core.Pod.DEFAULT_ROLES), io.atoll.core.PodStatus.ACTIVE, 1))
        .pod(new io.atoll.core.PodEntry(new io.atoll.core.Pod(worker, io.atoll.core.PodVersion.of("1.0"),
            java.util.List.of("worker")), io.atoll.core.PodStatus.ACTIVE, 1));
    for (int pos = 0; pos < 3; pos++) {
      b.claim(pos, io.atoll.core.Claim.stable(web, 2));
    }
    b.claim(4, io.atoll.core.Claim.stable(worker, 2));
    String text = StatusCommand.render(b.build());
    assertThat(text).contains("cluster: 6 shards").contains("2 pods").contains("2 shards without a live owner")
        .contains("spaces: default=4 (shards 1..4) worker=2 (shards 5..6)");
    String[] lines = text.split("\\R");
    assertThat(lines[2].split("\\s+")).containsExactly("POD", "VERSION", "ROLES", "SHARDS", "default", "worker");
    assertThat(lines[3].split("\\s+")).containsExactly(web.toString(), "1.0", "default", "3", "3", "0");
    assertThat(lines[4].split("\\s+")).containsExactly(worker.toString(), "1.0", "worker", "1", "0", "1");
    assertThat(lines[5].trim().split("\\s+")).containsExactly("(no", "live", "owner)", "2", "1", "1");
    assertThat(text).doesNotContain("no live pod with role");
    io.atoll.core.ClusterConfig grown = io.atoll.core.ClusterConfig.empty(io.atoll.core.Spaces.parse("default=4,worker=2"))
        .toBuilder().pod(new io.atoll.core.PodEntry(new io.atoll.core.Pod(web, io.atoll.core.PodVersion.of("1.0"),
            io.atoll.core.Pod.DEFAULT_ROLES), io.atoll.core.PodStatus.ACTIVE, 1)).build();
    assertThat(StatusCommand.render(grown)).contains("space worker: 2 shards, no live pod with role worker")
        .doesNotContain("space default:");
    // With the types the manager sent along (its pods declared them when they registered).
    io.atoll.transport.grpc.proto.ConfigBytes bytes = io.atoll.transport.grpc.Wire.bytes(grown).toBuilder()
        .addEntityTypes(io.atoll.transport.grpc.proto.EntityTypeInfo.newBuilder().setName("Report").setRole("worker"))
        .addEntityTypes(io.atoll.transport.grpc.proto.EntityTypeInfo.newBuilder().setName("Job").setRole("worker"))
        .addEntityTypes(io.atoll.transport.grpc.proto.EntityTypeInfo.newBuilder().setName("counter").setRole(""))
        .build();
    assertThat(StatusCommand.render(grown, StatusCommand.typesByRole(bytes)))
        .contains("space worker: 2 shards, no live pod with role worker (types: Job, Report)" + System.lineSeparator())
        .doesNotContain("counter");

    // Names an older manager did not check are shown escaped, as the manager's logs print them; a
    // long list stays one line.
    io.atoll.transport.grpc.proto.ConfigBytes.Builder odd = io.atoll.transport.grpc.Wire.bytes(grown).toBuilder()
        .addEntityTypes(io.atoll.transport.grpc.proto.EntityTypeInfo.newBuilder().setName("Job\n\u001b[2J")
            .setRole("worker"));
    for (int i = 0; i < 25; i++) {
      odd.addEntityTypes(io.atoll.transport.grpc.proto.EntityTypeInfo.newBuilder().setName("t" + (10 + i))
          .setRole("worker"));
    }
    String oddText = StatusCommand.render(grown, StatusCommand.typesByRole(odd.build()));
    assertThat(oddText).contains("(types: Job\\u000A\\u001B\\u005B2J, t10, ")
        .contains("(types: " + io.atoll.core.EntityAddress.printableTypeName("Job\n\u001b[2J") + ", ").contains(" and 6 more)")
        .doesNotContain("\u001b");
    assertThat(oddText.lines().filter(l -> l.startsWith("space worker:")).count()).isEqualTo(1);

    assertThat(StatusCommand.render(io.atoll.core.ClusterConfig.empty(io.atoll.core.Spaces.parse("worker=6"))))
        .contains("spaces: worker=6 (shards 1..6)").contains("ROLES");
    String single = StatusCommand.render(io.atoll.core.ClusterConfig.empty(6));
    assertThat(single).doesNotContain("spaces:").doesNotContain("ROLES")
        .contains(String.format("%-44s %-10s %7s%n", "POD", "VERSION", "SHARDS"));
  }

  @Test
  void statusNamesSpaceSettingsWithoutASpaceAndTheTypesTheManagerLeftOut() {
    io.atoll.transport.grpc.proto.ConfigBytes bytes = io.atoll.transport.grpc.Wire.bytes(
        io.atoll.core.ClusterConfig.empty(6)).toBuilder().addSettingsWithoutSpace("mailer")
        .addSettingsWithoutSpace("wrok\ner").setEntityTypesOmitted(12).build();
    assertThat(StatusCommand.notes(bytes)).isEqualTo(
        "space-settings for role mailer: no such space yet (its settings apply once a pod of the role registers)"
            + System.lineSeparator()
            + "space-settings for role wrok\\u000aer: no such space yet (its settings apply once a pod of the role"
            + " registers)" + System.lineSeparator()
            + "entity types: 12 more declared than the 0 the manager lists" + System.lineSeparator());
    assertThat(StatusCommand.notes(io.atoll.transport.grpc.Wire.bytes(io.atoll.core.ClusterConfig.empty(6))))
        .isEmpty();
  }
}
