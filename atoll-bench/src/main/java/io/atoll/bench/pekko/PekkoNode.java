package io.atoll.bench.pekko;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * One Pekko cluster node of the peer: Artery TCP on 127.0.0.1 (an ephemeral port), Jackson CBOR
 * for every message, 300 shards, and the least-shard strategy limited to 20 shards a rebalance
 * round ({@code rebalance-absolute-limit = 20}; the other settings are Pekko's defaults, so a
 * round runs every 10 s). Nodes with the role {@code pod} host the counters; a {@code client}
 * node only sends (a sharding proxy), like Atoll's client pod. Public for the command line.
 */
public final class PekkoNode implements AutoCloseable {

  /** The actor system's name, the same on every node. */
  public static final String SYSTEM = "bench";

  private final ActorSystem<Void> system;
  private final ClusterSharding sharding;

  private PekkoNode(ActorSystem<Void> system) {
    this.system = system;
    this.sharding = ClusterSharding.get(system);
  }

  /** The settings of a node with {@code role}; see the class comment. */
  static Config config(String role, int shards) {
    return ConfigFactory.parseString(String.join("\n",
        "pekko.loglevel = ERROR",
        "pekko.actor.provider = cluster",
        "pekko.actor.serialization-bindings {",
        "  \"io.atoll.bench.pekko.PekkoCounter$CborSerializable\" = jackson-cbor",
        "}",
        "pekko.remote.artery.canonical.hostname = \"127.0.0.1\"",
        "pekko.remote.artery.canonical.port = 0",
        "pekko.cluster.roles = [" + role + "]",
        "pekko.cluster.jmx.enabled = off",
        "pekko.cluster.log-info = off",
        "pekko.cluster.sharding.number-of-shards = " + shards,
        "pekko.cluster.sharding.least-shard-allocation-strategy.rebalance-absolute-limit = 20",
        // Atoll's bench counters are never passivated during a run either.
        "pekko.cluster.sharding.passivation.strategy = none",
        "pekko.coordinated-shutdown.exit-jvm = off",
        "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off"))
        .withFallback(ConfigFactory.load());
  }

  /**
   * Starts a node with {@code role} ({@code pod} or {@code client}) and registers the counter's
   * sharding (a proxy on a client), then joins {@code seed}, or itself when {@code seed} is null.
   */
  public static PekkoNode start(String role, int shards, Address seed) {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), SYSTEM, config(role, shards));
    PekkoNode node = new PekkoNode(system);
    node.sharding.init(Entity.of(PekkoCounter.TYPE, ctx -> PekkoCounter.create()).withRole("pod"));
    Cluster cluster = Cluster.get(system);
    cluster.manager().tell(Join.create(seed != null ? seed : cluster.selfMember().address()));
    return node;
  }

  /** The address this node listens on. */
  public Address address() {
    return Cluster.get(system).selfMember().address();
  }

  /** The address of the node at {@code hostPort} ("127.0.0.1:25520"). */
  public static Address addressOf(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("address: '" + hostPort + "' (expected: host:port)");
    }
    return new Address("pekko", SYSTEM, hostPort.substring(0, colon),
        Integer.parseInt(hostPort.substring(colon + 1)));
  }

  /** The node's actor system. */
  public ActorSystem<Void> system() {
    return system;
  }

  /** The node's sharding. */
  public ClusterSharding sharding() {
    return sharding;
  }

  /** Leaves nothing running: terminates the actor system and waits for it. */
  @Override
  public void close() {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().join();
  }
}
