package io.atoll.kv.internal.command;

import io.atoll.core.Pod;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.Health;
import io.atoll.kv.internal.cluster.Migrator;
import io.atoll.kv.internal.cluster.NodeKey;
import io.atoll.kv.internal.store.SlotStore;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/** Builds the full command table of a node from its parts. */
public final class Commands {
  private Commands() {}

  /** Every command, wired to these parts. */
  public static CommandTable table(SlotStore store, ClusterState cluster, Health health,
      ClusterCommandsMeet meet, Supplier<Pod> newIdentity, Migrator migrator, Executor migrations, Stats stats,
      Clients clients, ServerInfo info) {
    return table(store, cluster, health, meet, newIdentity, migrator, migrations, stats, clients, info, Auth.NONE,
        new NodeKey());
  }

  /**
   * Every command, wired to these parts, with {@code auth}'s password for AUTH and HELLO and, in
   * managed mode, {@code nodeKey} for the proof a hand-off connection gives (CLUSTER ATOLL-NODE).
   */
  public static CommandTable table(SlotStore store, ClusterState cluster, Health health,
      ClusterCommandsMeet meet, Supplier<Pod> newIdentity, Migrator migrator, Executor migrations, Stats stats,
      Clients clients, ServerInfo info, Auth auth, NodeKey nodeKey) {
    return table(store, cluster, health, meet, newIdentity, migrator, migrations, stats, clients, info, auth, nodeKey,
        null);
  }

  /** As above; SHUTDOWN runs {@code shutdown} (null: SHUTDOWN is refused). */
  public static CommandTable table(SlotStore store, ClusterState cluster, Health health,
      ClusterCommandsMeet meet, Supplier<Pod> newIdentity, Migrator migrator, Executor migrations, Stats stats,
      Clients clients, ServerInfo info, Auth auth, NodeKey nodeKey, Runnable shutdown) {
    CommandTable.Builder b = new CommandTable.Builder();
    new Strings(info.maxBulk(), stats).register(b);
    new Keys().register(b);
    new Hashes().register(b);
    new Server(store, stats, clients, info, b::build, auth, shutdown).register(b);
    new ClusterCommands(cluster, health, meet::meet, store, newIdentity, migrator, migrations, nodeKey,
        info.replication()).register(b);
    return b.build();
  }

  /** CLUSTER MEET's way to the bus. */
  @FunctionalInterface
  public interface ClusterCommandsMeet {
    /** Introduces this node to the bus at {@code host:busPort}. */
    void meet(String host, int busPort);
  }
}
