package io.atoll.server.chaos;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.kvdemo.KvDemoRun;
import io.atoll.testkit.Await;
import io.atoll.testkit.net.TcpRelay;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The processes of a KV chaos run: one shard manager with one replica per primary, and {@code atoll
 * kv --manager} nodes, each in a seat of its own (a client port and a data directory it keeps across
 * restarts) and each reaching the manager through a relay of its own, so that one node's traffic to
 * the manager can be dropped without refusing a connection. A node killed or stopped is started again
 * in its seat; the manager is started again on its port and data. Probes ask each node directly
 * (CLUSTER SLOTS, INFO replication). Used from one thread.
 */
final class KvChaosCluster implements AutoCloseable {

  static final int SLOTS = 16384;
  private static final Duration START = Duration.ofSeconds(90);
  private static final Duration GRACE = Duration.ofSeconds(30);
  private static final Pattern UP = Pattern.compile("listening on (\\S+:\\d+)");
  private static final Pattern REGISTERED = Pattern.compile("registered with the shard manager");

  /** A node's place: its port and data directory, its relay to the manager, its process now. */
  static final class Seat {
    final String name;
    final int port;
    final Path data;
    TcpRelay toManager;
    boolean relayClosed;
    ManagedProcess process;
    int starts;
    long startedAt;

    Seat(String name, int port, Path data, TcpRelay toManager) {
      this.name = name;
      this.port = port;
      this.data = data;
      this.toManager = toManager;
    }

    @Override
    public String toString() {
      return name + " (127.0.0.1:" + port + ")";
    }
  }

  /** What one node says of itself: slots it owns, its role, and its replicas online. */
  record NodeState(int owned, boolean replica, int replicasOnline) {
    static final NodeState DOWN = new NodeState(-1, false, 0);

    boolean up() {
      return owned >= 0;
    }
  }

  private final ProcessCluster processes;
  private final Path dir;
  private final Duration lease;
  private final Duration margin;
  private final RedisClient plain = RedisClient.create();
  private final List<Seat> seats = new ArrayList<>();
  private ManagedProcess manager;
  private int managerPort;
  private int managerStarts;

  KvChaosCluster(ProcessCluster processes, Path dir, Duration lease, Duration margin) {
    this.processes = processes;
    this.dir = dir;
    this.lease = lease;
    this.margin = margin;
  }

  /**
   * Starts the manager on its port (the first time, a free port below the ephemeral range, so no
   * outgoing connection takes it while the manager is down), waiting until it can bind it again.
   */
  PodAddress startManager() {
    if (managerPort == 0) {
      try {
        managerPort = KvDemoRun.freePorts(1)[0];
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    for (int attempt = 1; ; attempt++) {
      manager = processes.start(AtollProcesses.atoll("manager-" + (++managerStarts), List.of("manager", "--port",
          Integer.toString(managerPort), "--data-dir", dir.resolve("manager-data").toString(), "--shards",
          Integer.toString(SLOTS), "--new-space-shards", "0", "--replicas", "1", "--lease", lease.toMillis() + "ms",
          "--lease-margin", margin.toMillis() + "ms", "--max-moves", Integer.toString(SLOTS), "--max-moves-fraction",
          "1.0", "--termination-timeout", "4s", "--ping-timeout", "2s", "--rebalance-interval", "3s",
          "--rebalance-retry", "1s")));
      try {
        managerPort = PodAddress.parse(manager.awaitLog(UP, START)).port();
        reopenRelays();
        return new PodAddress("127.0.0.1", managerPort);
      } catch (IllegalStateException e) {
        if (attempt == 3 || manager.isAlive()) {
          throw e;
        }
      }
      int port = managerPort;
      Await.until("port " + port + " free for the manager again", START, () -> canBind(port));
    }
  }

  /**
   * Kills the manager (SIGKILL) and waits until it is gone. The nodes' relays to it are closed
   * first, so that a node's connect is refused, as on the manager's own port once its process is
   * gone (a relay would accept it, then reset it: a manager unreachable, not down).
   * {@link #startManager()} opens them again on their ports.
   */
  void killManager() {
    for (Seat s : seats) {
      s.toManager.close();
      s.relayClosed = true;
    }
    manager.kill();
    manager.awaitExit(GRACE);
  }

  /** Opens again, on their ports, the relays {@link #killManager()} closed. */
  private void reopenRelays() {
    for (Seat s : seats) {
      if (s.relayClosed) {
        int port = s.toManager.port();
        TcpRelay[] relay = new TcpRelay[1];
        // A closed listener's port is free once its accept loop has left accept().
        Await.until("the relay of " + s + " listening on " + port + " again", Duration.ofSeconds(10), () -> {
          try {
            relay[0] = TcpRelay.on(port, managerPort);
            return true;
          } catch (java.io.UncheckedIOException e) {
            return false;
          }
        });
        s.toManager = relay[0];
        s.relayClosed = false;
      }
    }
  }

  /** Whether the manager is up and listening. */
  boolean managerUp() {
    return manager.isAlive() && manager.logText().contains("listening on");
  }

  /** A new seat (a free port pair, a data directory) with its node started. */
  Seat addSeat(String name) throws IOException {
    int[] ports = KvDemoRun.freePorts(2); // the node's, and its relay's (below the ephemeral range: see startManager)
    Seat s = new Seat(name, ports[0], dir.resolve("kv-" + name), TcpRelay.on(ports[1], managerPort));
    seats.add(s);
    start(s);
    return s;
  }

  /** Starts the seat's node again (its old process gone), on its port and data directory. */
  void start(Seat s) {
    s.startedAt = System.nanoTime();
    s.process = processes.start(AtollProcesses.atoll(s.name + "-" + (++s.starts), List.of("kv", "--port",
        Integer.toString(s.port), "--manager", s.toManager.address(), "--data-dir", s.data.toString(),
        "--event-loops", "1")));
  }

  /** Waits until the seat's node has registered with the manager. */
  void awaitRegistered(Seat s) {
    s.process.awaitLog(REGISTERED, START);
  }

  /**
   * Starts again every seat's node that exited on its own (a node the manager declared dead stops
   * itself, as a process supervisor would see it), and the manager if it exited; what was started.
   */
  List<String> restartExited() {
    List<String> started = new ArrayList<>();
    if (!manager.isAlive()) {
      startManager();
      started.add("the manager");
    }
    for (Seat s : seats) {
      // A node that exits again at once is started at most every two seconds.
      if (s.process != null && !s.process.isAlive() && System.nanoTime() - s.startedAt > 2_000_000_000L) {
        start(s);
        started.add(s.toString());
      }
    }
    return started;
  }

  /** Removes a seat whose node left for good, closing its relay. */
  void removeSeat(Seat s) {
    seats.remove(s);
    if (!s.relayClosed) {
      s.toManager.close();
    }
  }

  List<Seat> seats() {
    return List.copyOf(seats);
  }

  /** The nodes' client addresses, for a cluster client's seeds. */
  List<RedisURI> seeds() {
    return seats.stream().map(s -> uri(s.port)).toList();
  }

  /** What the seat's node says of itself; {@link NodeState#DOWN} if it does not answer. */
  NodeState state(Seat s) {
    if (s.process == null || !s.process.isAlive() || s.process.isPaused()) {
      return NodeState.DOWN;
    }
    try (StatefulRedisConnection<String, String> c = plain.connect(uri(s.port))) {
      RedisCommands<String, String> r = c.sync();
      String me = r.clusterMyId();
      int owned = 0;
      for (Object o : r.clusterSlots()) {
        List<?> range = (List<?>) o;
        if (me.equals(String.valueOf(((List<?>) range.get(2)).get(2)))) {
          owned += (int) ((Long) range.get(1) - (Long) range.get(0) + 1);
        }
      }
      String info = r.info("replication");
      int online = 0;
      for (String line : info.split("\r?\n")) {
        if (line.startsWith("slave") && line.contains("state=online")) {
          online++;
        }
      }
      return new NodeState(owned, info.contains("role:slave"), online);
    } catch (RuntimeException e) {
      return NodeState.DOWN;
    }
  }

  /**
   * Whether the cluster is whole: the manager up, every seat's node up, the slots owned between them
   * exactly once over, and every node that owns slots with a replica online.
   */
  boolean whole() {
    if (!managerUp()) {
      return false;
    }
    int total = 0;
    for (Seat s : seats) {
      NodeState n = state(s);
      if (!n.up() || n.owned > 0 && n.replicasOnline < 1) {
        return false;
      }
      total += n.owned;
    }
    return total == SLOTS;
  }

  /** The seats whose node owns slots now, or (replicas) replicates. */
  List<Seat> seatsWhere(boolean primaries) {
    List<Seat> out = new ArrayList<>();
    for (Seat s : seats) {
      NodeState n = state(s);
      if (n.up() && (primaries ? n.owned > 0 : n.replica)) {
        out.add(s);
      }
    }
    return out;
  }

  static RedisURI uri(int port) {
    return RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofSeconds(2)).build();
  }

  private static boolean canBind(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() {
    for (Seat s : seats) {
      if (!s.relayClosed) {
        s.toManager.close();
      }
    }
    plain.shutdown(Duration.ZERO, Duration.ofSeconds(2));
  }
}
