package io.atoll.server.chaos;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AccountDb;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.demo.PodNames;
import io.atoll.server.demo.StoreServer;
import io.atoll.testkit.Await;
import io.atoll.testkit.net.TcpRelay;
import io.atoll.testkit.process.ManagedProcess;
import io.atoll.testkit.process.ProcessCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The processes of a chaos run and the relays in front of them: one shard manager (or, on a store
 * server, a leader and a standby on the same store), and pods that each reach every manager
 * through relays of their own and announce a relay in front of their own port, so that traffic to
 * the managers from one pod, into one pod, or between two pods only can be dropped without
 * refusing a connection. Pods that leave are replaced by new processes with new names (pod-5,
 * pod-6, ...); a manager that is killed is started again on its port (on a store, as a standby).
 * Used from one thread.
 */
final class ChaosCluster implements AutoCloseable {

  private static final Duration START = Duration.ofSeconds(90);
  private static final Duration GRACE = Duration.ofSeconds(30);
  private static final int BIND_TRIES = 3;
  private static final Pattern UP = Pattern.compile("(?:listening on|standing by on) (\\S+:\\d+)");

  /**
   * A pod process and its relays.
   *
   * @param name its process name
   * @param process the process
   * @param inbound the relay it announces: everything sent to it passes here
   * @param toManagers the relays it reaches the managers through, one per manager
   * @param version its code version
   */
  record Pod(String name, ManagedProcess process, TcpRelay inbound, List<TcpRelay> toManagers, String version) {
    /** The address it announces, as the activation log and the config name it. */
    PodAddress address() {
      return PodAddress.parse(inbound.address());
    }
  }

  /** One manager's place: its port once known, its process now. */
  private static final class Slot {
    final String name;
    int port;
    int starts;
    ManagedProcess process;

    Slot(String name) {
      this.name = name;
    }
  }

  private final ProcessCluster processes;
  private final Path dir;
  private final String dbUrl;
  private final int shards;
  private final Duration lease;
  private final Duration margin;
  private final StoreServer store;
  private final PodNames names;
  private final FreezeLog freezes;
  private final List<Pod> pods = new ArrayList<>();
  private final List<Slot> managers = new ArrayList<>();
  private int podStarts;

  /**
   * @param margin the managers' lease margin
   * @param store the store server the managers share (a leader and a standby), or null for one
   *     manager on files
   */
  ChaosCluster(ProcessCluster processes, Path dir, String dbUrl, int shards, Duration lease, Duration margin,
      StoreServer store, PodNames names, FreezeLog freezes) {
    this.processes = processes;
    this.dir = dir;
    this.dbUrl = dbUrl;
    this.shards = shards;
    this.lease = lease;
    this.margin = margin;
    this.store = store;
    this.names = names;
    this.freezes = freezes;
    managers.add(new Slot("manager"));
    if (store != null) {
      managers.add(new Slot("standby"));
    }
  }

  /** Starts every manager (the first leads) and waits until each listens; returns their addresses. */
  List<PodAddress> startManagers() {
    for (Slot s : managers) {
      start(s);
    }
    return managerAddresses();
  }

  /** The managers' own addresses, as a client is given them. */
  List<PodAddress> managerAddresses() {
    return managers.stream().map(s -> new PodAddress("127.0.0.1", s.port)).toList();
  }

  /** The store server, or null. */
  StoreServer store() {
    return store;
  }

  /**
   * Starts the slot's manager, on its port once it has one. A restart finds that port free again
   * only if nothing took it while the manager was down: a start that could not listen waits until
   * the port can be bound and tries again (three tries), since the pods' relays and the client know
   * the manager by that port.
   */
  private void start(Slot s) {
    String[] extra = store == null ? new String[0] : new String[] {"--store", store.uri()};
    for (int attempt = 1; ; attempt++) {
      s.process = processes.start(AtollProcesses.manager(s.name + "-" + (++s.starts), s.port, dir.resolve("manager"),
          shards, lease, margin, extra));
      try {
        s.port = PodAddress.parse(s.process.awaitLog(UP, START)).port();
        return;
      } catch (IllegalStateException e) {
        if (attempt == BIND_TRIES || s.port == 0 || !couldNotListen(s.process)) {
          throw e;
        }
      }
      int port = s.port;
      Await.until("port " + port + " free for " + s.name + " again", START, () -> canBind(port));
    }
  }

  /**
   * The manager that leads now: alive, and its last word was that it listens, not that it stands
   * by; the first manager when none says so (one manager on files always leads).
   */
  ManagedProcess leader() {
    if (store == null) {
      return managers.getFirst().process;
    }
    for (Slot s : managers) {
      if (s.process.isAlive()) {
        String log = s.process.logText();
        if (log.lastIndexOf("listening on") > log.lastIndexOf("standing by")) {
          return s.process;
        }
      }
    }
    return managers.getFirst().process;
  }

  /** Whether some manager leads (says it listens). */
  boolean someLeads() {
    return store == null || managers.stream().anyMatch(s -> {
      if (!s.process.isAlive()) {
        return false;
      }
      String log = s.process.logText();
      return log.lastIndexOf("listening on") > log.lastIndexOf("standing by");
    });
  }

  /** Kills the leading manager (SIGKILL), waits until it is gone, and returns its slot's name. */
  String killLeader() {
    ManagedProcess leader = leader();
    leader.kill();
    leader.awaitExit(GRACE);
    return slotOf(leader).name;
  }

  /** Starts every manager that is not running again on its port (on a store, it stands by). */
  List<String> restartStoppedManagers() {
    List<String> started = new ArrayList<>();
    for (Slot s : managers) {
      if (!s.process.isAlive()) {
        start(s);
        started.add(s.process.name());
      }
    }
    return started;
  }

  private Slot slotOf(ManagedProcess p) {
    return managers.stream().filter(s -> s.process == p).findFirst().orElseThrow();
  }

  /** Starts a pod of {@code version}; does not wait for it (see {@link #awaitUp}). */
  Pod startPod(String version) {
    int port = freePort();
    TcpRelay inbound = TcpRelay.to(port);
    List<TcpRelay> toManagers = managers.stream().map(s -> TcpRelay.to(s.port)).toList();
    String name = "pod-" + (++podStarts);
    Pod pod = new Pod(name, launch(name, port, inbound, toManagers, version), inbound, toManagers, version);
    pods.add(pod);
    names.put(pod.address(), name);
    return pod;
  }

  private ManagedProcess launch(String processName, int port, TcpRelay inbound, List<TcpRelay> toManagers,
      String version) {
    return processes.start(AtollProcesses.pod(processName,
        toManagers.stream().map(TcpRelay::address).collect(Collectors.joining(",")), dbUrl, List.of("--port",
            Integer.toString(port), "--advertise", inbound.address(), "--version", version)));
  }

  /**
   * Waits until {@code pod} has joined (it says so once it is registered) and returns it as it runs
   * now. Its port was free when {@link #startPod} chose it, but another process may have taken it
   * before the pod bound it: such a pod exits saying it cannot listen, and is started again on
   * another port behind the same relay, so it keeps its name and the address it announces (three
   * tries). The returned pod replaces the given one in {@link #pods()}.
   */
  Pod awaitUp(Pod pod) {
    Pod now = pod;
    for (int attempt = 1; ; attempt++) {
      try {
        now.process().awaitAddress(START);
        return now;
      } catch (IllegalStateException e) {
        if (attempt == BIND_TRIES || !couldNotListen(now.process())) {
          throw e;
        }
      }
      int port = freePort();
      now.inbound().retarget(port);
      Pod again = new Pod(now.name(), launch(now.name() + "-try-" + (attempt + 1), port, now.inbound(),
          now.toManagers(), now.version()), now.inbound(), now.toManagers(), now.version());
      pods.set(pods.indexOf(now), again);
      now = again;
    }
  }

  /** Whether {@code p} has exited because the port it was given was taken. */
  private static boolean couldNotListen(ManagedProcess p) {
    return !p.isAlive() && p.logText().contains("cannot listen on");
  }

  private static boolean canBind(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The pods in the cluster now, oldest first. */
  List<Pod> pods() {
    return List.copyOf(pods);
  }

  /** The pod that announces {@code address}, if it is one of ours now. */
  Optional<Pod> podAt(PodAddress address) {
    return pods.stream().filter(p -> p.address().equals(address)).findFirst();
  }

  /** Kills {@code pod} (SIGKILL) and waits until it is gone. */
  void kill(Pod pod) {
    pod.process().kill();
    pod.process().awaitExit(GRACE);
    remove(pod);
  }

  /** Stops {@code pod} gracefully (SIGTERM; SIGKILL after 30 s); returns its exit code. */
  int stop(Pod pod) {
    int code = pod.process().stop(GRACE);
    remove(pod);
    return code;
  }

  /**
   * Freezes {@code pod} (SIGSTOP); returns when (activation log time), read once {@code kill}
   * returned: the freeze began no later, so the audit's "frozen before" never flatters it.
   */
  long pause(Pod pod) {
    pod.process().pause();
    return AccountDb.nowMicros();
  }

  /**
   * Thaws {@code pod} (SIGCONT) frozen since {@code since}, and logs the freeze, its end read
   * before the signal is sent: the process ran nothing before it, so "after the thaw" in the
   * audit covers all it ran.
   */
  void resume(Pod pod, long since) {
    long thawed = AccountDb.nowMicros();
    pod.process().resume();
    freezes.frozen(pod.inbound().address(), since, thawed);
  }

  /**
   * Cuts the link between {@code a} and {@code b} only: on each one's inbound relay, the
   * connections the other holds get {@code mode}; the managers, the client and the other pods
   * still pass, and both pods still reach the managers. Returns how many connections between the
   * two were open at the cut (later ones are cut too).
   */
  int cut(Pod a, Pod b, TcpRelay.Mode mode) {
    a.inbound().mode(mode, SocketOwners.heldBy(b.process().pid(), a.inbound().port()));
    b.inbound().mode(mode, SocketOwners.heldBy(a.process().pid(), b.inbound().port()));
    return a.inbound().connectionsSelected() + b.inbound().connectionsSelected();
  }

  /** Heals what {@link #cut} did. */
  void heal(Pod a, Pod b) {
    a.inbound().release();
    b.inbound().release();
  }

  private void remove(Pod pod) {
    pods.remove(pod);
    close(pod);
  }

  private static void close(Pod pod) {
    pod.inbound().close();
    pod.toManagers().forEach(TcpRelay::close);
  }

  @Override
  public void close() {
    for (Pod p : pods()) {
      close(p);
    }
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on 127.0.0.1", e);
    }
  }
}
