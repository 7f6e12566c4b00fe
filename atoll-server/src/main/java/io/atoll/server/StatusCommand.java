package io.atoll.server;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodEntry;
import io.atoll.core.PodId;
import io.atoll.core.PodStatus;
import io.atoll.core.Space;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.proto.GetAssignmentsRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
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
        stub -> {
          io.atoll.transport.grpc.proto.ConfigBytes bytes = stub.getAssignments(GetAssignmentsRequest.getDefaultInstance());
          return render(Wire.config(bytes), typesByRole(bytes)) + notes(bytes);
        });
  }

  /**
   * The entity types the manager sent with the config (its pods declared them), by role, names
   * sorted, each escaped as the manager's logs print it ({@link io.atoll.core.EntityAddress#printableTypeName}),
   * so that one name reads alike in both.
   */
  static Map<String, java.util.SortedSet<String>> typesByRole(io.atoll.transport.grpc.proto.ConfigBytes bytes) {
    Map<String, java.util.SortedSet<String>> out = new java.util.HashMap<>();
    for (io.atoll.transport.grpc.proto.EntityTypeInfo t : bytes.getEntityTypesList()) {
      out.computeIfAbsent(t.getRole(), r -> new java.util.TreeSet<>()).add(io.atoll.core.EntityAddress.printableTypeName(t.getName()));
    }
    return out;
  }

  /**
   * The lines after the table: the roles with space settings and no space yet ("space-settings
   * for role X: no such space yet"), and how many declared types the manager left out.
   */
  static String notes(io.atoll.transport.grpc.proto.ConfigBytes bytes) {
    StringBuilder out = new StringBuilder();
    for (String role : bytes.getSettingsWithoutSpaceList()) {
      out.append(io.atoll.manager.ShardManager.noSpaceYet(printable(role))).append(" (its settings apply once a pod"
          + " of the role registers)").append(System.lineSeparator());
    }
    if (bytes.getEntityTypesOmitted() > 0) {
      out.append("entity types: ").append(bytes.getEntityTypesOmitted()).append(" more declared than the ")
          .append(bytes.getEntityTypesCount()).append(" the manager lists").append(System.lineSeparator());
    }
    return out.toString();
  }

  /**
   * {@code s} as it is if every character is printable ASCII, else with each other character
   * as a backslash, 'u' and four hex digits: names come from the manager, which checks them, but one of an older
   * version did not, and a line break or a terminal control sequence must not reach the screen.
   */
  static String printable(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= 0x20 && c < 0x7f && c != '\\') {
        b.append(c);
      } else {
        b.append(String.format("\\u%04x", (int) c));
      }
    }
    return b.toString();
  }

  static String render(ClusterConfig c) {
    return render(c, Map.of());
  }

  /**
   * The table of {@code c}; a space no live pod hosts is named with the entity types its pods
   * declared ({@code typesByRole}: role to type names, as the manager sent them).
   */
  static String render(ClusterConfig c, Map<String, java.util.SortedSet<String>> typesByRole) {
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
    List<Space> spaces = c.spaces().list();
    if (!c.spaces().isSingle()) {
      return renderSpaces(c, spaces, typesByRole, out);
    }
    out.append(String.format("%-44s %-10s %7s%n", "POD", "VERSION", "SHARDS"));
    for (PodEntry e : c.pods()) {
      if (e.status() == PodStatus.ACTIVE) {
        out.append(String.format("%-44s %-10s %7d%n", e.id(), e.pod().version(), owned.getOrDefault(e.id(), 0)));
      }
    }
    return out.toString();
  }

  /**
   * The table of a config laid out in spaces (not one default space): per live pod its roles, its
   * shards and its shards in
   * each space, and per space the shards without a live owner; a space no live pod hosts is
   * named with its types.
   */
  private static String renderSpaces(ClusterConfig c, List<Space> spaces,
      Map<String, java.util.SortedSet<String>> typesByRole, StringBuilder out) {
    Map<PodId, int[]> bySpace = new LinkedHashMap<>();
    List<PodEntry> live = new ArrayList<>();
    for (PodEntry e : c.pods()) {
      if (e.status() == PodStatus.ACTIVE) {
        bySpace.put(e.id(), new int[spaces.size()]);
        live.add(e);
      }
    }
    int[] unowned = new int[spaces.size()];
    for (int s = 0; s < spaces.size(); s++) {
      Space space = spaces.get(s);
      for (int pos = space.first(); pos < space.first() + space.count(); pos++) {
        PodEntry e = c.ownerEntry(pos);
        int[] counts = e == null ? null : bySpace.get(e.id());
        if (counts == null) {
          unowned[s]++;
        } else {
          counts[s]++;
        }
      }
    }
    StringBuilder spaceLine = new StringBuilder("spaces:");
    for (Space s : spaces) {
      spaceLine.append(' ').append(s.displayName()).append('=').append(s.count()).append(" (shards ")
          .append(s.first() + 1).append("..").append(s.first() + s.count()).append(')');
    }
    out.append(spaceLine).append(System.lineSeparator());
    out.append(String.format("%-44s %-10s %-16s %7s", "POD", "VERSION", "ROLES", "SHARDS"));
    for (Space s : spaces) {
      out.append(' ').append(String.format("%" + width(s) + "s", s.displayName()));
    }
    out.append(System.lineSeparator());
    for (PodEntry e : live) {
      int[] counts = bySpace.get(e.id());
      String roles = String.join(",", e.pod().roles().stream().map(r -> r.isEmpty() ? "default" : r).toList());
      out.append(String.format("%-44s %-10s %-16s %7d", e.id(), e.pod().version(), roles,
          Arrays.stream(counts).sum()));
      for (int s = 0; s < spaces.size(); s++) {
        out.append(' ').append(String.format("%" + width(spaces.get(s)) + "d", counts[s]));
      }
      out.append(System.lineSeparator());
    }
    out.append(String.format("%-44s %-10s %-16s %7d", "(no live owner)", "", "", Arrays.stream(unowned).sum()));
    for (int s = 0; s < spaces.size(); s++) {
      out.append(' ').append(String.format("%" + width(spaces.get(s)) + "d", unowned[s]));
    }
    out.append(System.lineSeparator());
    // A space kept for a role no live pod hosts (its pods were all stopped, or never started):
    // reported, not dropped; its shards and messages wait for a pod of the role.
    for (Space s : spaces) {
      if (live.stream().noneMatch(e -> e.pod().hosts(s.role()))) {
        java.util.SortedSet<String> types = typesByRole.getOrDefault(s.role(), java.util.Collections.emptySortedSet());
        out.append("space ").append(s.displayName()).append(": ").append(s.count())
            .append(" shards, no live pod with role ").append(s.displayName())
            .append(types.isEmpty() ? "" : " (types: " + names(types) + ")")
            .append(System.lineSeparator());
      }
    }
    return out.toString();
  }

  /** Up to 20 names, then how many more: a space's line stays a line. */
  private static String names(java.util.Collection<String> names) {
    return String.join(", ", names.stream().limit(20).toList())
        + (names.size() > 20 ? " and " + (names.size() - 20) + " more" : "");
  }

  private static int width(Space s) {
    return Math.max(7, s.displayName().length());
  }
}
