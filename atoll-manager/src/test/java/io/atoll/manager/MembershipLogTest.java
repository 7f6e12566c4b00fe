package io.atoll.manager;

import static org.assertj.core.api.Assertions.assertThat;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodId;
import io.atoll.core.PodVersion;
import io.atoll.core.Spaces;
import io.atoll.core.spi.PodHealth;
import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The lines an operator reads of pods joining and leaving, on a virtual clock: who joined with
 * which version, roles and entity types; a space appended for a new role, or the warning that a
 * role gets no shards; who left or died and why.
 */
class MembershipLogTest {

  static final Pod WORKER = new Pod(new PodId(new PodAddress("127.0.0.1", 7001), 1), PodVersion.of("1.2"),
      List.of("worker"));
  static final Pod PLAIN = new Pod(new PodId(new PodAddress("127.0.0.1", 7002), 1), PodVersion.of("1.2"));

  final VirtualTime vt = new VirtualTime();
  final VirtualTime.SimLoop loop = vt.newLoop();
  final MemoryStore store = new MemoryStore();
  volatile PodHealth.Verdict verdict = PodHealth.Verdict.UNKNOWN;

  Membership membership(int newSpaceShards) {
    Journal j = new Journal(store, vt.executor(Duration.ofMillis(5).toNanos(), () -> true), loop, vt,
        Spaces.parse("default=4"), c -> {}, e -> {}, Duration.ofSeconds(1), Duration.ofMillis(200),
        Journal.MAX_TOMBSTONES, Journal.MAX_PRUNED);
    loop.callAsLoop(() -> j.recover(UnaryOperator.identity()));
    return new Membership(j, new Leases(Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofHours(1)),
        p -> verdict, loop, vt.executor(0, () -> true), vt, r -> {}, newSpaceShards);
  }

  ClusterConfig settle(CompletableFuture<ClusterConfig> f) {
    vt.advance(Duration.ofMillis(10));
    return f.join();
  }

  @Test
  void aJoinNamesTheVersionRolesTypesAndTheSpaceAppendedForANewRole() {
    Membership m = membership(3);
    try (LogLines log = new LogLines()) {
      TreeMap<String, io.atoll.core.TypeDeclaration> types = new TreeMap<>();
      types.put("cart", io.atoll.core.TypeDeclaration.roleOnly("worker"));
      types.put("order", io.atoll.core.TypeDeclaration.roleOnly("worker"));
      settle(loop.callAsLoop(() -> m.register(WORKER, types, "", false)));
      settle(loop.callAsLoop(() -> m.register(PLAIN)));
      assertThat(log.of(Membership.class, "INFO")).containsExactly(
          "pod " + WORKER.id() + " joined (version 1.2, roles [worker], types cart, order); 1 pods",
          "space worker appended for pod " + WORKER.id() + "'s role: shards 5..7 (spaces now default=4,worker=3)",
          "pod " + PLAIN.id() + " joined (version 1.2); 2 pods");
      assertThat(log.of(Membership.class, "WARN")).isEmpty();
    }
  }

  @Test
  void aTypeNameOutOfFormFromAnOlderPodIsLoggedEscaped() {
    Membership m = membership(3);
    try (LogLines log = new LogLines()) {
      TreeMap<String, io.atoll.core.TypeDeclaration> types = new TreeMap<>();
      types.put("my job\nINFO fake", io.atoll.core.TypeDeclaration.roleOnly("worker"));
      settle(loop.callAsLoop(() -> m.register(WORKER, types, "", false)));
      assertThat(log.of(Membership.class, "INFO")).first().asString()
          .endsWith("types my\\u0020job\\u000AINFO\\u0020fake); 1 pods");
    }
  }

  @Test
  void aRoleWithoutASpaceIsWarnedWhenTheManagerAppendsNone() {
    Membership m = membership(0);
    try (LogLines log = new LogLines()) {
      settle(loop.callAsLoop(() -> m.register(WORKER)));
      assertThat(log.of(Membership.class, "WARN")).containsExactly("pod " + WORKER.id() + " hosts role 'worker',"
          + " which has no shard space in this cluster (spaces: default=4); it gets no shards of it (the manager"
          + " appends no space: its new-space-shards is 0)");
    }
  }

  @Test
  void aDrainIsLoggedOnceHoweverOftenThePodAsks() {
    Membership m = membership(0);
    settle(loop.callAsLoop(() -> m.register(PLAIN)));
    try (LogLines log = new LogLines()) {
      String line = "pod " + PLAIN.id() + " drains: its 0 shards will move to the other pods";
      loop.callAsLoop(() -> m.drain(PLAIN.id()));
      assertThat(log.of(Membership.class, "INFO")).as("at the first ask").containsExactly(line);
      loop.callAsLoop(() -> m.drain(PLAIN.id()));
      assertThat(log.of(Membership.class, "INFO")).as("not again").containsExactly(line);
    }
  }

  @Test
  void aDepartureLeavingASpaceWithoutAPodWarnsWhatWaits() {
    Membership m = membership(3);
    TreeMap<String, io.atoll.core.TypeDeclaration> types = new TreeMap<>();
    types.put("cart", io.atoll.core.TypeDeclaration.roleOnly("worker"));
    settle(loop.callAsLoop(() -> m.register(WORKER, types, "", false)));
    try (LogLines log = new LogLines()) {
      settle(loop.callAsLoop(() -> m.markGone(WORKER.id(), "left")));
      assertThat(log.of(Membership.class, "WARN")).contains("space worker: 3 shards, no live pod with role worker"
          + " (types: cart); they wait for a pod of that role (messages to its types wait, then fail naming the type"
          + " and the role)");
    }
  }

  @Test
  void aDepartureNamesItsCauseAndAReportedDeathItsReporter() {
    Membership m = membership(0);
    settle(loop.callAsLoop(() -> m.register(PLAIN)));
    settle(loop.callAsLoop(() -> m.register(WORKER)));
    try (LogLines log = new LogLines()) {
      settle(loop.callAsLoop(() -> m.markGone(WORKER.id(), "left")));
      verdict = PodHealth.Verdict.GONE;
      m.reportUnhealthy(PLAIN.id(), WORKER.id());
      vt.advance(Duration.ofMillis(20));
      assertThat(log.of(Membership.class, "INFO")).containsExactly(
          "pod " + WORKER.id() + " left; its 0 shards will move; 1 pods",
          "pod " + PLAIN.id() + " is dead (the health source says it is gone, reported by " + WORKER.id()
              + "); its 0 shards will move; 0 pods");
    }
  }
}
