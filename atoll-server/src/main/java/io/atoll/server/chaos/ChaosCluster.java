package io.atoll.server.chaos;

import io.atoll.core.PodAddress;
import io.atoll.server.demo.AccountDb;
import io.atoll.server.demo.AtollProcesses;
import io.atoll.server.demo.PodNames;
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

/**
 * The processes of a chaos run and the relays in front of them: a shard manager, and pods that each
 * reach the manager through a relay of their own and announce a relay in front of their own port,
 * so that traffic to the manager from one pod, or into one pod, can be dropped without refusing a
 * connection. Pods that leave are replaced by new processes with new names (pod-5, pod-6, ...).
 * Used from one thread.
 */
final class ChaosCluster implements AutoCloseable {

  private static final Duration START = Duration.ofSeconds(90);
  private static final Duration GRACE = Duration.ofSeconds(30);

  /**
   * A pod process and its relays.
   *
   * @param name its process name
   * @param process the process
   * @param inbound the relay it announces: everything sent to it passes here
   * @param toManager the relay it reaches the manager through
   * @param version its code version
   */
  record Pod(String name, ManagedProcess process, TcpRelay inbound, TcpRelay toManager, String version) {
    /** The address it announces, as the activation log and the config name it. */
    PodAddress address() {
      return PodAddress.parse(inbound.address());
    }
  }

  private final ProcessCluster processes;
  private final Path dir;
  private final String dbUrl;
  private final int shards;
  private final Duration lease;
  private final PodNames names;
  private final FreezeLog freezes;
  private final List<Pod> pods = new ArrayList<>();
  private ManagedProcess manager;
  private int managerPort;
  private int managerStarts;
  private int podStarts;

  ChaosCluster(ProcessCluster processes, Path dir, String dbUrl, int shards, Duration lease, PodNames names,
      FreezeLog freezes) {
    this.processes = processes;
    this.dir = dir;
    this.dbUrl = dbUrl;
    this.shards = shards;
    this.lease = lease;
    this.names = names;
    this.freezes = freezes;
  }

  /** Starts the manager (on its old port after the first time) and waits until it listens. */
  PodAddress startManager() {
    manager = processes.start(AtollProcesses.manager("manager-" + (++managerStarts), managerPort,
        dir.resolve("manager"), shards, lease));
    PodAddress a = manager.awaitAddress(START);
    managerPort = a.port();
    return a;
  }

  ManagedProcess manager() {
    return manager;
  }

  /** Kills the manager (SIGKILL) and waits until it is gone. */
  void killManager() {
    manager.kill();
    manager.awaitExit(GRACE);
  }

  /** Starts a pod of {@code version}; does not wait for it. */
  Pod startPod(String version) {
    int port = freePort();
    TcpRelay inbound = TcpRelay.to(port);
    TcpRelay toManager = TcpRelay.to(managerPort);
    String name = "pod-" + (++podStarts);
    ManagedProcess p = processes.start(AtollProcesses.pod(name, toManager.address(), dbUrl, List.of("--port",
        Integer.toString(port), "--advertise", inbound.address(), "--version", version)));
    Pod pod = new Pod(name, p, inbound, toManager, version);
    pods.add(pod);
    names.put(pod.address(), name);
    return pod;
  }

  /** Waits until {@code pod} has joined (it says so once it is registered). */
  void awaitUp(Pod pod) {
    pod.process().awaitAddress(START);
  }

  /** The pods in the cluster now, oldest first. */
  List<Pod> pods() {
    return List.copyOf(pods);
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

  /** Freezes {@code pod} (SIGSTOP); returns when (activation log time). */
  long pause(Pod pod) {
    long at = AccountDb.nowMicros();
    pod.process().pause();
    return at;
  }

  /** Thaws {@code pod} (SIGCONT) frozen since {@code since}, and logs the freeze. */
  void resume(Pod pod, long since) {
    pod.process().resume();
    freezes.frozen(pod.inbound().address(), since);
  }

  private void remove(Pod pod) {
    pods.remove(pod);
    pod.inbound().close();
    pod.toManager().close();
  }

  @Override
  public void close() {
    for (Pod p : pods()) {
      p.inbound().close();
      p.toManager().close();
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
