package io.atoll.kv.internal.managed;

import com.google.protobuf.ByteString;
import io.atoll.core.ClusterConfig;
import io.atoll.core.ClusterId;
import io.atoll.core.Pod;
import io.atoll.core.PodAddress;
import io.atoll.core.PodVersion;
import io.atoll.kv.KvDeparture;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.Imports;
import io.atoll.kv.internal.cluster.MarkRecords;
import io.atoll.kv.internal.cluster.Migrator;
import io.atoll.kv.internal.cluster.NodeKey;
import io.atoll.kv.internal.cluster.Nodes;
import io.atoll.kv.internal.store.SlotStore;
import io.atoll.runtime.internal.cluster.ManagerAddresses;
import io.atoll.transport.grpc.Wire;
import io.atoll.transport.grpc.security.ManagerTrust;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.TlsFiles;
import io.atoll.transport.grpc.security.WireSecurity;
import io.grpc.Server;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KV node in managed mode: registers with the shard manager as a pod (its control port is the
 * client port + {@link ManagedConfigs#CONTROL_OFFSET}), keeps its lease (the node serves keys only
 * while it holds one), adopts every config the manager sends, hands slots off with their keys
 * when the manager moves them, and on {@link #leave} drains: every slot and its keys move to the
 * other nodes before it unregisters.
 */
public final class ManagedNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ManagedNode.class);
  /** The version every KV node registers with (all alike: the strategy prefers none). */
  static final PodVersion VERSION = PodVersion.KV;

  private final ClusterState cluster;
  private final ManagerClient client;
  private final HandOffs handOffs;
  private final ExecutorService workers;
  private final Server server;
  private final ControlProbes probes;
  private final SlotStore store;
  /** The marks a replica's slots mirror, taken when it is promoted. */
  private final MarkRecords.Mirror mirror;
  /** Notified whenever a config is adopted (a leave and a hand-off wait on it). */
  private final Object configs;
  /**
   * How long a slot may stay split by a hand-off that stopped part way, with no request resuming
   * it, before its keys are brought back ({@link HandOffs#returnStalled}).
   */
  public static final long STALLED_MILLIS = 10_000;
  /** Runs {@link HandOffs#returnStalled}. */
  private final java.util.concurrent.ScheduledExecutorService repairs =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kv-handoff-repair");
        t.setDaemon(true);
        return t;
      });
  /** Restarted with kept keys, and no config adopted since: the first one clears orphans. */
  private volatile boolean orphansUnchecked;

  private ManagedNode(ClusterState cluster, SlotStore store, MarkRecords.Mirror mirror, Object configs,
      ManagerClient client, HandOffs handOffs, ExecutorService workers, Server server, ControlProbes probes,
      boolean rejoined) {
    this.orphansUnchecked = rejoined;
    this.store = store;
    this.mirror = mirror;
    this.configs = configs;
    this.probes = probes;
    this.cluster = cluster;
    this.client = client;
    this.handOffs = handOffs;
    this.workers = workers;
    this.server = server;
  }

  /**
   * Starts the control server and registers {@code me} (the node's client-side pod) with one of
   * the {@code managers} (the leader; the node follows it when another takes over), waiting up to
   * {@code registerTimeout}. With TLS in {@code security}, the node talks to the managers and
   * takes their calls on its control port with its pod certificate, over mutual TLS.
   *
   * @param onDeclaredDead called if the manager declared this node dead (it then serves nothing)
   * @param password the nodes' password for hand-offs (AUTH), or null if none is required
   * @param tls the files of the node's TLS client port, or null if it has none: with them, hand-offs
   *     go to the targets' TLS ports over mutual TLS (the certificate must hold a pod identity)
   * @param keepServingWhileManagerDown whether the node rides out a manager that is down (every
   *     manager address refuses connections and no other node renewed lately) by extending its
   *     lease, as entity pods do ({@link ManagerOutage}); false: its lease lapses and it fences
   * @throws IllegalStateException if the control port cannot be bound or the manager refused
   * @throws IllegalArgumentException if {@code tls}' certificate is not a pod certificate
   */
  public static ManagedNode start(List<PodAddress> managers, WireSecurity security, Pod me, SlotStore store,
      ClusterState cluster, Migrator migrator, LongSupplier clock, Duration registerTimeout, Runnable onDeclaredDead,
      String password, TlsFiles tls, boolean keepServingWhileManagerDown, NodeKey nodeKey) {
    return start(managers, security, me, store, cluster, migrator, clock, registerTimeout, onDeclaredDead, password,
        tls, keepServingWhileManagerDown, nodeKey, null);
  }

  /**
   * A node restarted on its data directory, registering again as the incarnation it was: the
   * credential the manager gave that incarnation (empty if it was not kept) and its cluster.
   */
  public record Rejoin(ByteString credential, ClusterId cluster) {}

  /**
   * The manager refused the incarnation a restarted node registered as: it was declared gone. The
   * node must join as a new incarnation, without the keys it kept.
   */
  public static boolean incarnationGone(RuntimeException e) {
    return e instanceof ManagerClient.IncarnationGone;
  }

  /**
   * As {@link #start(List, WireSecurity, Pod, SlotStore, ClusterState, Migrator, LongSupplier,
   * Duration, Runnable, String, TlsFiles, boolean, NodeKey)}; with {@code rejoin} (not null), {@code
   * me} is an incarnation that registered before (the node restarted on its data directory with
   * the keys it kept): Register presents its credential and cluster, and the first config adopted
   * clears keys of slots this node neither owns nor imports (their removal was not on disk yet when
   * the node stopped).
   *
   * @throws IllegalStateException also if the manager declared {@code me} gone ({@link #incarnationGone})
   */
  public static ManagedNode start(List<PodAddress> managers, WireSecurity security, Pod me, SlotStore store,
      ClusterState cluster, Migrator migrator, LongSupplier clock, Duration registerTimeout, Runnable onDeclaredDead,
      String password, TlsFiles tls, boolean keepServingWhileManagerDown, NodeKey nodeKey, Rejoin rejoin) {
    if (tls != null && (tls.identity() == null || tls.identity().role() != Role.POD)) {
      throw new IllegalArgumentException("TLS port: certificate " + tls.certificate().getSubjectX500Principal()
          + " holds " + (tls.identity() == null ? "no Atoll identity" : tls.identity()) + " (expected: a pod"
          + " certificate, " + Role.POD.uri("NAME") + ", as atoll certs writes them: managed nodes hand slots off"
          + " to each other over their TLS ports with it)");
    }
    LongSupplier nanos = System::nanoTime;
    // A node started again on its saved view owns the slots it had there: none of them is served
    // before the manager grants it a lease (it may have given them away meanwhile).
    ClusterView saved = cluster.view();
    NodeLease lease = new NodeLease(nanos, saved.config().ownedCounts().getOrDefault(saved.me(), 0) == 0);
    cluster.managed(String.join(",", managers.stream().map(PodAddress::toString).toList()), lease::serving);
    // Its TLS client port goes to the manager, whose configs carry it to every node and client.
    Pod managed = new Pod(ManagedConfigs.toManager(me.id()), VERSION, Pod.DEFAULT_ROLES, Nodes.tlsPort(me));
    ExecutorService workers = Executors.newFixedThreadPool(HandOffs.PARALLEL, r -> {
      Thread t = new Thread(r, "kv-handoff");
      t.setDaemon(true);
      return t;
    });
    Object configs = new Object();
    HandOffs handOffs = new HandOffs(store, cluster, migrator, workers, clock, nanos, password,
        tls == null ? null : tls.clientContext(Role.POD).getSocketFactory(), nodeKey, (epoch, wait) -> {
          long end = nanos.getAsLong() + wait;
          synchronized (configs) {
            while (cluster.view().config().epoch() < epoch) {
              long left = end - nanos.getAsLong();
              if (left <= 0) {
                return false;
              }
              try {
                TimeUnit.NANOSECONDS.timedWait(configs, left);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
              }
            }
            return true;
          }
        });
    // Configs arrive once registered; the node exists by then (set below, before register).
    java.util.concurrent.atomic.AtomicReference<ManagedNode> self = new java.util.concurrent.atomic.AtomicReference<>();
    java.util.function.Consumer<ClusterConfig> onConfig = c -> {
      ManagedNode n = self.get();
      if (n != null) {
        n.onConfig(c);
      }
    };
    ManagerTrust trust = new ManagerTrust();
    ManagerAddresses addresses = new ManagerAddresses(managers, a -> Wire.channel(a, security, Role.MANAGER));
    ControlProbes probes = new ControlProbes(security);
    ManagerOutage outage = new ManagerOutage(me.id().toString(), nanos, managers, keepServingWhileManagerDown, lease,
        () -> peers(cluster), probes);
    ManagerClient client = new ManagerClient(addresses, trust, managed, lease, outage, nanos, onConfig, nodeKey, () -> {
      LOG.error("kv node {} was declared dead by the shard manager; its slots were given to other nodes and it"
          + " serves nothing; restart it (it joins as a new node, without keys)", me.id());
      ManagedNode n = self.get();
      if (n != null) {
        n.wakeLeave(); // a leave under way waits for no config of a dead node
      }
      onDeclaredDead.run();
    });
    KvPodService service = new KvPodService(managed, lease, client::clusterId, client::term,
        () -> cluster.view().config().epoch(), onConfig, handOffs, trust);
    Server server;
    try {
      server = Wire.startServer(me.address().host(), managed.address().port(), List.of(service), security);
    } catch (RuntimeException e) {
      client.close();
      probes.close();
      workers.shutdownNow();
      throw new IllegalStateException("cannot listen for the shard manager on " + managed.address() + ": "
          + e.getMessage(), e);
    }
    if (rejoin != null) {
      client.rejoin(rejoin.credential(), rejoin.cluster());
    }
    ManagedNode node = new ManagedNode(cluster, store, MarkRecords.mirror(store, clock), configs, client, handOffs,
        workers, server, probes, rejoin != null);
    self.set(node);
    long idle = TimeUnit.MILLISECONDS.toNanos(STALLED_MILLIS);
    node.repairs.scheduleWithFixedDelay(() -> {
      try {
        handOffs.returnStalled(idle);
      } catch (RuntimeException e) {
        LOG.warn("kv: returning the keys of stalled hand-offs failed", e);
      }
    }, STALLED_MILLIS / 2, STALLED_MILLIS / 2, TimeUnit.MILLISECONDS);
    try {
      client.register(registerTimeout);
    } catch (IllegalStateException e) {
      node.close();
      if (!security.isTls() && !(e instanceof ManagerClient.IncarnationGone)) {
        throw new IllegalStateException(e.getMessage() + " (this node talks to the manager without TLS: if the"
            + " manager runs with mutual TLS, give this node a pod certificate of the cluster's CA, --tls-ca, --tls-cert"
            + " and --tls-key)", e);
      }
      throw e;
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
    return node;
  }

  /** The control addresses of the cluster's other active nodes, by the latest config. */
  private static List<PodAddress> peers(ClusterState cluster) {
    ClusterView v = cluster.view();
    return v.config().activePods().stream().filter(p -> !p.id().equals(v.me()))
        .map(p -> ManagedConfigs.toManager(p.id()).address()).toList();
  }

  private void wakeLeave() {
    synchronized (configs) {
      configs.notifyAll();
    }
  }

  private void onConfig(ClusterConfig managed) {
    ClusterId mine = client.clusterId();
    if (!mine.equals(ClusterId.NONE) && !managed.clusterId().equals(ClusterId.NONE)
        && !managed.clusterId().equals(mine)) {
      LOG.warn("kv: ignored a config of cluster {} (this node belongs to {})", managed.clusterId(), mine);
      return;
    }
    boolean wasReplica = replicating(cluster.view());
    boolean adopted = cluster.adopt(ManagedConfigs.toKv(managed), mirror);
    if (replicating(cluster.view())) {
      // A replica mirrors its primary, import records included: what they decide is the
      // primary's to carry out, and reaches this node in the primary's stream.
      if (adopted) {
        synchronized (configs) {
          configs.notifyAll();
        }
      }
      return;
    }
    if (wasReplica && adopted) {
      // It replicates no more. Promoted, it keeps the slots the manager gave it, with the import
      // records of its primary's hand-offs (it goes on with its primary's tenure), and clears
      // the copies of other slots, which their owners hold, newer; else it clears everything.
      boolean promoted = owned() > 0 || MarkRecords.heir(cluster.view().config(), cluster.view().me());
      int cleared = promoted ? Imports.clearOrphans(store, cluster.view()) : Imports.clearAll(store);
      LOG.info("kv: this node replicates no more{}; cleared the copies of {} slots it does not own",
          promoted ? " and owns " + owned() + " slots of the primary it replicated" : "", cleared);
      orphansUnchecked = false;
    }
    if (orphansUnchecked) {
      // The first config since the restart, adopted or the one the node had kept already.
      orphansUnchecked = false;
      int orphans = Imports.clearOrphans(store, cluster.view());
      if (orphans > 0) {
        LOG.warn("kv: cleared the keys of {} slots this restarted node neither owns nor imports (they left by"
            + " hand-offs whose removals were not on disk yet when it stopped)", orphans);
      }
    }
    if (adopted) {
      // Keys left here by hand-offs that this config shows will never be made go (Imports).
      int cleared = Imports.settle(store, cluster.view());
      if (cleared > 0) {
        LOG.info("kv: cleared the keys of {} slots left here by hand-offs their sources did not finish (the slots"
            + " went to other nodes)", cleared);
      }
      synchronized (configs) {
        configs.notifyAll();
      }
    }
  }

  /**
   * Whether the manager made this node a replica: its entry names a primary, listed as a member
   * or not (a primary declared dead is GONE until the manager promotes this node; the view counts
   * such a replica as a primary of nothing, but its copies are the slots' only ones).
   */
  private static boolean replicating(ClusterView v) {
    return v.config().pod(v.me()).map(e -> Nodes.primaryOf(e.pod()) != null).orElse(false);
  }

  /** The credential the manager gave this incarnation (empty before it registered). */
  public ByteString credential() {
    return client.credential();
  }

  /** Keys this node has handed to others. */
  public long keysMoved() {
    return handOffs.keysMoved();
  }

  /** Slots this node has handed to others. */
  public long slotsMoved() {
    return handOffs.slotsMoved();
  }

  /**
   * Graceful leave: asks the manager to drain this node, waits until it owns no slot (each moved
   * with its keys by the manager's hand-offs) or {@code timeout} passed, then unregisters. Slots
   * still owned after the timeout move when the manager sees this node leave, without their keys.
   */
  public KvDeparture leave(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      client.drain();
    } catch (IllegalStateException e) {
      LOG.warn("kv: {}", e.getMessage());
    }
    synchronized (configs) {
      // Also keys of hand-offs to this node that stopped part way (their slots are still their
      // sources'): the sources bring them back (HandOffs.returnStalled), or they would leave with it.
      while ((owned() > 0 || importedSlots() > 0) && !client.declaredDead() && System.nanoTime() - deadline < 0) {
        try {
          configs.wait(Math.max(1, Math.min(250, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    int imported = importedSlots();
    if (imported > 0) {
      LOG.warn("kv: leaving with the keys of {} slots that hand-offs to this node left part way, not yet brought"
          + " back by their sources: they are lost with it", imported);
    }
    int left = owned();
    boolean unregistered = client.unregister();
    client.close(); // no more renewals: the manager no longer knows this node
    return new KvDeparture(left, handOffs.keysMoved(), handOffs.slotsMoved(), unregistered);
  }

  /** Slots holding keys of a hand-off to this node that are not this node's (an import record). */
  private int importedSlots() {
    if (replicating(cluster.view())) {
      return 0; // its primary's records, mirrored: its primary's to settle
    }
    int n = 0;
    for (int s = 0; s < io.atoll.core.slots.KeySlots.SLOT_COUNT; s++) {
      io.atoll.kv.internal.store.Slot slot = store.slot(s);
      synchronized (slot) {
        if (slot.importedFrom() != null && (slot.size() > 0 || slot.lentBatch() != 0)) {
          n++;
        }
      }
    }
    return n;
  }

  private int owned() {
    ClusterView v = cluster.view();
    return v.config().ownedCounts().getOrDefault(v.me(), 0);
  }

  @Override
  public void close() {
    repairs.shutdownNow();
    client.close();
    probes.close();
    server.shutdownNow();
    workers.shutdownNow();
    try {
      // Their last changes reach the log before the node closes it (a move's deletions, a
      // return's keys); a thread blocked on a peer gives up at its socket timeout.
      workers.awaitTermination(10, TimeUnit.SECONDS);
      repairs.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
