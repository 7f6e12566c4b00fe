package io.atoll.server;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll status}: the cluster as the manager sees it. */
@Command(name = "status", mixinStandardHelpOptions = true, description = "Prints pods, versions and shards per pod; --watch redraws on every change.")
final class StatusCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Mixin
  TlsOptions tls;

  @Option(names = "--manager", required = true, description = "The shard manager, host:port.")
  String manager;

  @Option(names = "--timeout", defaultValue = "5s", description = "Default: ${DEFAULT-VALUE}.")
  Duration timeout;

  @Option(names = "--watch", description = "Keep following the cluster: redraw on every change of the config.")
  boolean watch;

  @Option(names = "--updates", defaultValue = "0", description = "With --watch: stop after this many redraws; 0 for"
      + " never (default: ${DEFAULT-VALUE}).")
  int updates;

  @Override
  public Integer call() throws InterruptedException {
    if (watch) {
      io.atoll.core.PodAddress address;
      try {
        address = io.atoll.core.PodAddress.parse(manager);
      } catch (IllegalArgumentException e) {
        System.err.println("atoll status: --manager " + e.getMessage());
        return 2;
      }
      if (updates < 0) {
        System.err.println("atoll status: --updates " + updates + " (expected: >= 0)");
        return 2;
      }
      io.atoll.transport.grpc.security.WireSecurity security;
      try {
        security = tls.security(io.atoll.transport.grpc.security.Role.ADMIN);
      } catch (IllegalArgumentException e) {
        System.err.println("atoll status: " + e.getMessage());
        return 2;
      }
      return new StatusWatch(address, security, System.out, System.console() != null).run(updates);
    }
    return ManagerCall.run("status", manager, timeout, tls,
        stub -> render(Wire.config(stub.getAssignments(GetAssignmentsRequest.getDefaultInstance()))));
  }

  static String render(ClusterConfig c) {
    StringBuilder out = new StringBuilder();
    Map<PodId, Integer> owned = c.ownedCounts();
    int unassigned = 0;
    for (int pos = 0; pos < c.size(); pos++) {
      PodEntry e = c.ownerEntry(pos);
      if (e == null || e.status() != PodStatus.ACTIVE) {
        unassigned++;
      }
    }
    out.append(String.format("cluster: %d shards, epoch %d, %d pods, %d shards without a live owner%n", c.size(),
        c.epoch(), c.activePods().size(), unassigned));
    out.append(String.format("%-44s %-10s %7s%n", "POD", "VERSION", "SHARDS"));
    for (PodEntry e : c.pods()) {
      if (e.status() == PodStatus.ACTIVE) {
        out.append(String.format("%-44s %-10s %7d%n", e.id(), e.pod().version(), owned.getOrDefault(e.id(), 0)));
      }
    }
    return out.toString();
  }
}
