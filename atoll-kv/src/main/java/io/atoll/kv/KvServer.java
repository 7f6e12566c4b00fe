package io.atoll.kv;

import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.core.PodEntry;
import io.atoll.core.PodStatus;
import io.atoll.kv.internal.cluster.ClusterBus;
import io.atoll.kv.internal.cluster.ClusterState;
import io.atoll.kv.internal.cluster.ClusterView;
import io.atoll.kv.internal.cluster.ConfigFile;
import io.atoll.kv.internal.cluster.MarkRecords;
import io.atoll.kv.internal.cluster.Migrator;
import io.atoll.kv.internal.cluster.NodeKey;
import io.atoll.kv.internal.cluster.Nodes;
import io.atoll.kv.internal.command.Auth;
import io.atoll.kv.internal.command.Clients;
import io.atoll.kv.internal.command.CommandTable;
import io.atoll.kv.internal.command.Commands;
import io.atoll.kv.internal.command.Dispatcher;
import io.atoll.kv.internal.command.Replication;
import io.atoll.kv.internal.replication.Backlog;
import io.atoll.kv.internal.replication.Replicator;
import io.atoll.kv.internal.replication.Tee;
import io.atoll.kv.internal.store.SlotJournal;
import io.atoll.kv.internal.command.ServerInfo;
import io.atoll.kv.internal.command.Stats;
import io.atoll.kv.internal.command.CommandLog;
import io.atoll.kv.internal.command.Session;
import io.atoll.kv.internal.persist.AppendOnlyFile;
import io.atoll.kv.internal.persist.DataDirLock;
import io.atoll.kv.internal.persist.Snapshot;
import io.atoll.kv.internal.command.Snapshots;
import io.atoll.kv.internal.resp.Reply;
import io.atoll.kv.internal.resp.RespDecoder;
import io.atoll.kv.internal.resp.RespLimits;
import io.atoll.kv.internal.server.KvConnection;
import io.atoll.kv.internal.server.Transport;
import io.atoll.kv.internal.store.SlotStore;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.ServerSocket;
import java.security.SecureRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.time.Duration;
import io.atoll.core.PodAddress;
import io.atoll.kv.internal.cluster.Health;
import io.atoll.kv.internal.managed.ManagedConfigs;
import io.atoll.kv.internal.managed.ManagedNode;
import io.atoll.transport.grpc.security.TlsFiles;
import io.atoll.transport.grpc.security.WireSecurity;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running Atoll KV node: a RESP2/RESP3 server on Netty speaking Redis Cluster's commands,
 * its cluster bus, and active expiry. Start with {@link #start}; {@link #close} stops everything
 * it started. Thread-safe.
 */
public final class KvServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KvServer.class);

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final EventLoopGroup busGroup;
  private final ExecutorService migrations;
  private final ScheduledExecutorService expiry;
  private final ClusterBus bus;
  private final SlotStore store;
  private final Migrator migrator;
  private final ClusterState cluster;
  private final Channel server;
  private final Channel tlsServer;
  private final int port;
  private final int tlsPort;
  private final int busPort;
  /** The TLS port's files (reloaded when they change), or null without a TLS port. */
  private final TlsFiles tlsFiles;
  /** The key the manager gives this node to prove itself to other nodes (managed mode). */
  private final NodeKey nodeKey;
  /** Managed mode only (else null): the node's side of the shard manager. */
  private volatile ManagedNode managed;
  /** The append-only file, or null without persistence. */
  private final AppendOnlyFile aof;
  /** SAVE and BGSAVE's snapshot, or null (managed mode without the append-only file). */
  private final Snapshot snapshot;
  /** Held while the node runs with persistence: one process per data directory. */
  private final DataDirLock dataDirLock;
  /** Managed mode with persistence: what the node kept from before its start; else null. */
  private final Kept kept;
  /** Redis-cluster mode's replication (null in managed mode). */
  private final Replicator replicator;
  /** Completed once {@link #close} has stopped everything (SHUTDOWN, a fatal log error, or the owner). */
  private final java.util.concurrent.CompletableFuture<Void> closed = new java.util.concurrent.CompletableFuture<>();
  private final java.util.concurrent.atomic.AtomicBoolean closing = new java.util.concurrent.atomic.AtomicBoolean();

  private KvServer(EventLoopGroup boss, EventLoopGroup workers, EventLoopGroup busGroup, ExecutorService migrations,
      ScheduledExecutorService expiry, ClusterBus bus, ClusterState cluster, Channel server, Channel tlsServer,
      int port, int tlsPort, int busPort, SlotStore store, Migrator migrator, TlsFiles tlsFiles, NodeKey nodeKey,
      AppendOnlyFile aof, Snapshot snapshot, DataDirLock dataDirLock, Kept kept, Replicator replicator) {
    this.replicator = replicator;
    this.dataDirLock = dataDirLock;
    this.kept = kept;
    this.aof = aof;
    this.snapshot = snapshot;
    this.nodeKey = nodeKey;
    this.tlsFiles = tlsFiles;
    this.tlsServer = tlsServer;
    this.tlsPort = tlsPort;
    this.store = store;
    this.migrator = migrator;
    this.boss = boss;
    this.workers = workers;
    this.busGroup = busGroup;
    this.migrations = migrations;
    this.expiry = expiry;
    this.bus = bus;
    this.cluster = cluster;
    this.server = server;
    this.port = port;
    this.busPort = busPort;
  }

  /**
   * Starts a node: reads its config from the data directory (or starts as a new node), binds the
   * client and bus ports, and starts gossiping.
   *
   * @throws IllegalStateException if a port cannot be bound or the config file is unreadable; the
   *     message says which
   */
  public static KvServer start(KvSettings s) {
    return start(s, KvObserver.NONE);
  }

  /**
   * As {@link #start(KvSettings)}, reporting every command to {@code observer} (on the event
   * loops).
   */
  public static KvServer start(KvSettings s, KvObserver observer) {
    return start(s, observer, null, Duration.ZERO);
  }

  /**
   * Starts a node in managed mode: the shard manager at {@code manager} places its slots (it must
   * run with 16384 shards, one per slot). The node listens for the manager on its client port +
   * 10000 (instead of a cluster bus), registers within {@code registerTimeout}, keeps a lease and
   * serves keys only while it holds one, and refuses operator slot commands. With the append-only
   * file ({@link KvSettings#persistence}), the node keeps its identity, its migration marks and the
   * manager's credential in its data directory ({@code managed-nodes.conf}, {@code
   * managed-credential}) and registers again as the same node when restarted on it; if the manager
   * declared it dead meanwhile, it drops the keys it kept and joins as a new node. Without it, a
   * restarted node is a new node. {@link #leave} drains the node (its slots and keys move to the
   * others); {@link #close} stops it without a leave.
   *
   * @param onDeclaredDead called (once, on a gRPC thread) if the manager declared the node dead
   * @throws IllegalStateException if a port cannot be bound or the manager cannot be registered with
   */
  public static KvServer startManaged(KvSettings s, KvObserver observer, PodAddress manager, Duration registerTimeout,
      Runnable onDeclaredDead) {
    return startManaged(s, observer, List.of(java.util.Objects.requireNonNull(manager, "manager")),
        WireSecurity.PLAINTEXT, registerTimeout, onDeclaredDead);
  }

  /**
   * As {@link #startManaged(KvSettings, KvObserver, PodAddress, Duration, Runnable)}, with every
   * manager of the cluster (a leader and its standbys: the node registers with the leader and
   * follows the one that takes over) and the transport security the managers use: with mutual
   * TLS, the node holds a pod certificate of the cluster's CA, talks to the managers over TLS and
   * takes only the manager's calls on its control port. Either way, configs and hand-offs count
   * only if signed by the manager's key.
   *
   * <p>A node registers its TLS client port ({@link KvSettings#tls}) with the manager, whose configs
   * carry every node's to the others, so each node names the others' TLS ports to TLS clients
   * (nodes may have them at any port). With a TLS port, hand-offs go to the other nodes' TLS
   * ports over mutual TLS with this node's certificate, which must be a pod certificate of the CA.
   * With a password ({@link KvSettings#requirePass}), every node must have the same one: hand-offs
   * authenticate with the node's own.
   *
   * @throws IllegalArgumentException if {@code managers} is empty
   */
  public static KvServer startManaged(KvSettings s, KvObserver observer, List<PodAddress> managers,
      WireSecurity security, Duration registerTimeout, Runnable onDeclaredDead) {
    return startManaged(s, observer, managers, security, registerTimeout, onDeclaredDead, true);
  }

  /**
   * As {@link #startManaged(KvSettings, KvObserver, List, WireSecurity, Duration, Runnable)}, choosing
   * whether the node rides out a manager outage.
   *
   * @param keepServingWhileManagerDown true (the default): while every manager address refuses
   *     connections and no other node renewed lately, the node extends its lease and keeps serving
   *     its slots, as entity pods do; false: its lease lapses and it answers {@code -CLUSTERDOWN}
   *     until the manager is back (for a network where a running manager may look refused to one
   *     node alone)
   */
  public static KvServer startManaged(KvSettings s, KvObserver observer, List<PodAddress> managers,
      WireSecurity security, Duration registerTimeout, Runnable onDeclaredDead, boolean keepServingWhileManagerDown) {
    if (managers.isEmpty()) {
      throw new IllegalArgumentException("managers: none (expected: at least one host:port)");
    }
    KvServer server = start(s, observer, managers.get(0), registerTimeout);
    java.util.Objects.requireNonNull(security, "security");
    try {
      Kept kept = server.kept;
      ManagedNode.Rejoin rejoin = null;
      ClusterView saved = server.cluster.view();
      if (kept != null && kept.saved() && !saved.replicasOf(saved.me()).isEmpty()
          && Replicator.replicaHeldEverything(s.dataDir().resolve(REPLICA_SYNCED_FILE))) {
        // Its replica holds every write it acknowledged. Coming back as itself, it would be copied
        // again by that replica (a restart begins a new stream), which clears the replica's keys
        // first: a crash of this node then, or a log that lacks the last writes (appendfsync
        // everysec), and acknowledged writes are gone. The replica takes its slots instead.
        server.startOver("it had a replica holding every write it acknowledged, which takes its slots once the"
            + " shard manager declares the old incarnation dead");
      } else if (kept != null && kept.saved()) {
        // Everything a hand-off or a return keeps is on disk (marks, import records, lent batches,
        // the last returned batch stored): the node comes back as the incarnation it was.
        rejoin = new ManagedNode.Rejoin(readCredential(kept.credentialFile()),
            server.cluster.view().config().clusterId());
      } else if (kept != null && server.store.size() > 0) {
        server.startOver("its data directory holds keys but no identity (" + ConfigFile.MANAGED + ")");
      }
      ManagedNode node;
      try {
        node = server.startManagedNode(managers, security, registerTimeout, onDeclaredDead, s,
            keepServingWhileManagerDown, rejoin);
      } catch (IllegalStateException e) {
        if (!ManagedNode.incarnationGone(e)) {
          throw e;
        }
        server.startOver("the shard manager declared it dead while it was down (" + e.getMessage()
            + "), and gave its slots to other nodes");
        node = server.startManagedNode(managers, security, registerTimeout, onDeclaredDead, s,
            keepServingWhileManagerDown, null);
      }
      server.managed = node;
      if (kept != null) {
        writeCredential(kept.credentialFile(), node.credential());
      }
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  /**
   * Managed mode with persistence: whether the node found a saved identity ({@code saved}: it
   * registers again as it), and where the manager's credential for it is kept.
   */
  private record Kept(boolean saved, Path credentialFile) {}

  /**
   * The file in a managed primary's data directory that is there while a replica the manager gave
   * it holds its whole stream (the replica acknowledged its copy).
   */
  static final String REPLICA_SYNCED_FILE = "replica-synced";

  /** The file in a managed node's data directory that keeps the credential Register gave it. */
  static final String CREDENTIAL_FILE = "managed-credential";

  private static KvServer start(KvSettings s, KvObserver observer, PodAddress manager, Duration registerTimeout) {
    LongSupplier clock = System::currentTimeMillis;
    boolean persist = s.persistence().appendOnly();
    DataDirLock lock = persist ? DataDirLock.acquire(s.dataDir()) : null;
    try {
      return start(s, observer, manager, clock, persist, lock);
    } catch (RuntimeException | Error e) {
      if (lock != null) {
        lock.close();
      }
      throw e;
    }
  }

  private static KvServer start(KvSettings s, KvObserver observer, PodAddress manager, LongSupplier clock,
      boolean persist, DataDirLock lock) {
    ConfigFile managedFile = manager != null && persist ? new ConfigFile(s.dataDir(), ConfigFile.MANAGED, true) : null;
    if (managedFile != null && Files.exists(s.dataDir().resolve(ConfigFile.NODES))) {
      throw new IllegalStateException("the data directory " + s.dataDir() + " holds a Redis-cluster-mode node ("
          + ConfigFile.NODES + "), whose keys a managed node would not know where to put (expected: another data"
          + " directory for a node of the shard manager)");
    }
    if (manager == null && persist && Files.exists(s.dataDir().resolve(ConfigFile.MANAGED))) {
      throw new IllegalStateException("the data directory " + s.dataDir() + " holds a node of a shard manager ("
          + ConfigFile.MANAGED + ") (expected: --manager, or another data directory for a Redis-cluster-mode node)");
    }
    java.util.Optional<ClusterView> savedManaged = managedFile == null ? java.util.Optional.empty() : managedFile.load();
    int port = s.port() != 0 ? s.port() : savedManaged.isPresent() ? savedManaged.get().me().address().port()
        : manager != null ? freeManagedPort(s.bind()) : freePort(s.bind());
    if (manager != null && port + ManagedConfigs.CONTROL_OFFSET > 65535) {
      throw new IllegalStateException("port " + port + ": a managed node listens for the shard manager on port+"
          + ManagedConfigs.CONTROL_OFFSET + " (expected: a port up to " + (65535 - ManagedConfigs.CONTROL_OFFSET) + ")");
    }
    int busPort = manager != null ? port + ManagedConfigs.CONTROL_OFFSET
        : s.busPort() == -1 ? port + 10000 : s.busPort() == 0 ? freePort(s.bind()) : s.busPort();
    int tlsPort = s.tls() == null ? 0 : s.tls().port() == 0 ? freePort(s.bind()) : s.tls().port();
    TlsFiles tlsFiles = s.tls() == null ? null : tlsFiles(s.tls());
    SslContext ssl = s.tls() == null ? null : sslContext(s.tls(), tlsFiles);
    Auth auth = Auth.password(s.requirePass());
    SecureRandom random = new SecureRandom();
    ClusterState cluster;
    // Redis-cluster mode's replication follows the view: each change of it also goes there.
    java.util.concurrent.atomic.AtomicReference<Replicator> replicatorRef = new java.util.concurrent.atomic.AtomicReference<>();
    // Managed mode: the view's migration marks also go to the log and the stream (MarkRecords).
    java.util.concurrent.atomic.AtomicReference<MarkRecords> marksRef = new java.util.concurrent.atomic.AtomicReference<>();
    if (manager == null) {
      ConfigFile file = new ConfigFile(s.dataDir());
      ClusterView initial = file.load().map(v -> adopt(v, s.bind(), port, busPort, tlsPort)).orElseGet(() ->
          ClusterState.fresh(Nodes.pod(s.bind(), port, random.nextLong(), busPort, tlsPort)));
      file.save(initial);
      cluster = new ClusterState(initial, clock, v -> {
        file.save(v);
        Replicator r = replicatorRef.get();
        if (r != null) {
          r.viewChanged(v);
        }
      });
    } else if (managedFile != null) {
      // Its identity and migration marks are kept (synced before a mark takes effect), so that it
      // can come back as the same node with its keys; the manager's configs replace the config.
      ClusterView initial = savedManaged.map(v -> adopt(v, s.bind(), port, busPort, tlsPort)).orElseGet(() ->
          ClusterState.fresh(Nodes.pod(s.bind(), port, random.nextLong(), busPort, tlsPort)));
      managedFile.save(initial);
      cluster = new ClusterState(initial, clock, v -> {
        MarkRecords m = marksRef.get();
        if (m != null) {
          m.viewChanged(v);
        }
      }, v -> {
        managedFile.save(v);
        Replicator r = replicatorRef.get();
        if (r != null) {
          r.viewChanged(v);
        }
      });
      // It owns the slots of its saved config, but holds no lease yet: nothing is served until it
      // registered (ManagedNode takes over the gate).
      cluster.managed(manager.toString(), () -> false);
    } else {
      cluster = new ClusterState(ClusterState.fresh(Nodes.pod(s.bind(), port, random.nextLong(), busPort, tlsPort)),
          clock, v -> {
            MarkRecords m = marksRef.get();
            if (m != null) {
              m.viewChanged(v);
            }
          }, v -> {
            Replicator r = replicatorRef.get();
            if (r != null) {
              r.viewChanged(v);
            }
          });
    }
    java.util.concurrent.atomic.AtomicReference<KvServer> self = new java.util.concurrent.atomic.AtomicReference<>();
    AppendOnlyFile aof = persist ? AppendOnlyFile.open(s.dataDir(), s.persistence().fsync(), () -> {
      KvServer node = self.get();
      if (node != null) {
        Thread.ofPlatform().name("kv-stop").start(node::close);
      }
    }) : null;
    // Every change goes to the replicas too (the backlog keeps nothing until a replica asks): in
    // managed mode the manager says which nodes replicate which.
    Backlog backlog = new Backlog(s.replicas().backlogBytes());
    CommandLog aofLog = aof == null ? CommandLog.NONE : aof;
    CommandLog log = backlog == null ? aofLog : Tee.log(aofLog, backlog);
    EventLoopGroup boss = Transport.group(1, "kv-accept");
    EventLoopGroup workers = Transport.group(s.eventLoops(), "kv-io");
    EventLoopGroup busGroup = Transport.group(1, "kv-bus");
    ExecutorService migrations = Executors.newSingleThreadExecutor(daemon("kv-migrate"));
    ScheduledExecutorService expiry = Executors.newSingleThreadScheduledExecutor(daemon("kv-expire"));
    try {
      // Managed mode has no bus: the manager's configs replace gossip, and its port is the manager's.
      ClusterBus bus = manager != null ? null : new ClusterBus(cluster, busGroup, Transport.serverChannel(),
          Transport.channel(), clock, s.nodeTimeoutMillis());
      if (bus != null) {
        bus.start(s.bind(), busPort);
      }
      SlotJournal journal = aof == null ? SlotJournal.NONE : aof;
      SlotStore store = new SlotStore(backlog == null ? journal : Tee.journal(journal, backlog));
      Replicator replicator = backlog == null ? null : new Replicator(backlog, store, cluster,
          new Replicator.Settings(port, s.requirePass() == null ? null
              : s.requirePass().getBytes(java.nio.charset.StandardCharsets.UTF_8), (int) Math.min(Integer.MAX_VALUE,
              s.maxBulkLength()), (int) Math.max(5000, s.nodeTimeoutMillis()), s.replicas().minReplicasToAck(),
              s.replicas().ackTimeoutMillis(), manager != null,
              managedFile != null ? s.dataDir().resolve(REPLICA_SYNCED_FILE) : null), clock, expiry);
      if (aof != null) {
        aof.attach(store); // what BGREWRITEAOF copies
      }
      Stats stats = new Stats();
      Clients clients = new Clients();
      // A managed node keeps snapshots only beside its log (it loads the log, never a snapshot).
      Snapshot snapshot = manager == null || aof != null
          ? new Snapshot(s.dataDir(), store, stats::writes, clock.getAsLong()) : null;
      ServerInfo info = new ServerInfo(port, s.bind(), s.maxMemory(), s.maxBulkLength(), s.queryBufferLimit(),
          s.outputBufferLimit(), s.nodeTimeoutMillis(), clock.getAsLong(), log,
          snapshot == null ? Snapshots.NONE : snapshot, replicator == null ? Replication.NONE : replicator);
      // A return's batch is settled (the target drops it) only once this node's log holds the keys
      // stored and its replicas acknowledged them: a promoted replica must not lack them.
      Migrator migrator = new Migrator(store, cluster, clock, () -> log.awaitLogged(log.position())
          && (replicator == null || !replicator.acksWrites() || replicator.whenReplicated(replicator.offset()).join()));
      NodeKey nodeKey = new NodeKey();
      CommandTable table = Commands.table(store, cluster, bus != null ? bus : Health.MANAGED,
          bus != null ? bus::meet : (host, p) -> { },
          () -> Nodes.pod(s.bind(), port, random.nextLong(), busPort, tlsPort), migrator, migrations,
          stats, clients, info, auth, nodeKey, () -> {
            KvServer node = self.get();
            if (node != null) {
              LOG.info("atoll kv: SHUTDOWN asked by a client: stopping");
              Thread.ofPlatform().name("kv-shutdown").start(node::close);
            }
          });
      Dispatcher dispatcher = new Dispatcher(table, store, cluster, stats, clock, s.maxMemory(), observer, log,
          replicator == null ? Replication.NONE : replicator);
      if (aof == null && snapshot != null) {
        // Before the ports open: nobody reads a half-loaded store (without a log there is no
        // -LOADING state to answer with; a client retries the refused connection).
        Snapshot.load(s.dataDir(), replayer(dispatcher));
      }
      RespLimits limits = new RespLimits(s.maxBulkLength(), s.maxArrayLength(), s.maxInlineLength(),
          s.queryBufferLimit());
      // Clients over TLS only: the plaintext port is not opened (its number still names the node).
      Channel server = s.tls() != null && s.tls().only() ? null : listen(boss, workers, s.bind(), port, null, () -> {
        stats.connected();
        return new KvConnection(dispatcher, clients, clock, s.outputBufferLimit(), false, auth.required(), log,
            replicator == null ? Replication.NONE : replicator);
      }, limits);
      Channel tlsServer = null;
      if (ssl != null) {
        try {
          tlsServer = listen(boss, workers, s.bind(), tlsPort, ssl, () -> {
            stats.connected();
            return new KvConnection(dispatcher, clients, clock, s.outputBufferLimit(), true, auth.required(), log,
                replicator == null ? Replication.NONE : replicator);
          }, limits);
        } catch (RuntimeException | InterruptedException e) {
          if (server != null) {
            server.close();
          }
          throw e;
        }
      }
      if (aof != null) {
        // Clients connecting meanwhile are answered -LOADING, as Redis does.
        aof.load(replayer(dispatcher));
        if (aof.isEmpty() && Files.exists(s.dataDir().resolve(Snapshot.NAME))) {
          // The log was just switched on beside a snapshot: its keys become the log's base.
          long[] records = {0};
          aof.adoptSnapshot(() -> records[0] = Snapshot.load(s.dataDir(), replayer(dispatcher)));
          LOG.info("appendonly: the log was empty: loaded {} ({} records) and wrote its keys as the log's base",
              s.dataDir().resolve(Snapshot.NAME), records[0]);
        }
      }
      if (s.maxMemory() > 0 && store.usedMemory() > s.maxMemory()) {
        // A load never drops what was acknowledged; as Redis with noeviction, writes are refused.
        LOG.warn("atoll kv: the keys loaded hold about {} bytes, above --maxmemory {}: writes that need memory are"
            + " refused with -OOM until keys are deleted or the limit is raised", store.usedMemory(), s.maxMemory());
      }
      if (manager != null) {
        // After the log's load: the view's marks (the saved config's) replace what the log left.
        MarkRecords marks = new MarkRecords(store);
        cluster.withView(v -> {
          marks.viewChanged(v);
          marksRef.set(marks);
        });
      }
      if (replicator != null) {
        replicatorRef.set(replicator);
        replicator.start(replicated(dispatcher)); // a replica follows its primary from here on
      }
      // Its own thread: a slot's lock may be held for a while (MIGRATE), and that must not stall
      // the bus (missed pings would make peers suspect this node) or a client event loop.
      expiry.scheduleWithFixedDelay(() -> stats.expired(store.expireCycle(clock.getAsLong(), 64)),
          100, 100, TimeUnit.MILLISECONDS);
      LOG.info("atoll kv node {} listening on {}:{}{} ({} {}, {}{})", cluster.view().myNodeId(), s.bind(),
          server == null ? tlsPort + " (TLS only; named by port " + port + ")" : port,
          tlsServer == null || server == null ? "" : " and TLS port " + tlsPort,
          manager != null ? "control port for the shard manager" : "cluster bus", busPort, Transport.name(),
          auth.required() ? ", password required" : "");
      Kept kept = managedFile == null ? null : new Kept(savedManaged.isPresent(), s.dataDir().resolve(CREDENTIAL_FILE));
      KvServer node = new KvServer(boss, workers, busGroup, migrations, expiry, bus, cluster, server, tlsServer, port,
          tlsPort, busPort, store, migrator, tlsFiles, nodeKey, aof, snapshot, lock, kept, replicator);
      self.set(node);
      return node;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      shutdown(boss, workers, busGroup, migrations, expiry);
      if (aof != null) {
        aof.close();
      }
      throw new IllegalStateException("interrupted while starting", e);
    } catch (RuntimeException e) {
      shutdown(boss, workers, busGroup, migrations, expiry);
      if (aof != null) {
        aof.close();
      }
      throw new IllegalStateException("cannot start on " + s.bind() + ":" + port + " (bus " + busPort
          + (tlsPort == 0 ? "" : ", TLS port " + tlsPort) + "): " + e.getMessage(), e);
    }
  }

  /** A client port: RESP over TLS with {@code ssl}, plaintext without. */
  private static Channel listen(EventLoopGroup boss, EventLoopGroup workers, String bind, int port, SslContext ssl,
      java.util.function.Supplier<KvConnection> connection, RespLimits limits) throws InterruptedException {
    return new ServerBootstrap().group(boss, workers).channel(Transport.serverChannel())
        .option(ChannelOption.SO_BACKLOG, 1024)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 << 10, 1 << 20))
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            if (ssl != null) {
              ch.pipeline().addLast(ssl.newHandler(ch.alloc()));
            }
            ch.pipeline().addLast(new RespDecoder(limits)).addLast(connection.get());
          }
        })
        .bind(bind, port).sync().channel();
  }

  /**
   * The PEM files of {@code t}, loaded again when they change.
   *
   * @throws IllegalArgumentException naming the files if they do not load
   */
  private static TlsFiles tlsFiles(KvTls t) {
    try {
      return TlsFiles.load(t.ca(), t.cert(), t.key());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("TLS port: cannot use certificate " + t.cert() + " with key " + t.key()
          + " and CA " + t.ca() + ": " + e.getMessage()
          + " (expected: PEM files, the key unencrypted PKCS#8, the certificate issued by the CA, as atoll certs"
          + " writes them)", e);
    }
  }

  /**
   * The TLS server side of {@code t}: every handshake presents the newest certificate of
   * {@code files} and checks client certificates against the newest CA file.
   */
  private static SslContext sslContext(KvTls t, TlsFiles files) {
    try {
      return SslContextBuilder.forServer(files.keyManager())
          .sslProvider(SslProvider.JDK)
          .trustManager(files.clientTrust())
          .clientAuth(switch (t.clientCerts()) {
            case REQUIRE -> ClientAuth.REQUIRE;
            case OPTIONAL -> ClientAuth.OPTIONAL;
            case NONE -> ClientAuth.NONE;
          })
          .build();
    } catch (javax.net.ssl.SSLException | RuntimeException e) {
      throw new IllegalArgumentException("TLS port: cannot use certificate " + t.cert() + " with key " + t.key()
          + " and CA " + t.ca() + ": " + e.getMessage()
          + " (expected: PEM files, the key unencrypted PKCS#8, as atoll certs writes them)", e);
    }
  }

  private ManagedNode startManagedNode(List<PodAddress> managers, WireSecurity security, Duration registerTimeout,
      Runnable onDeclaredDead, KvSettings s, boolean keepServingWhileManagerDown, ManagedNode.Rejoin rejoin) {
    return ManagedNode.start(managers, security, cluster.view().config().pod(cluster.view().me()).orElseThrow().pod(),
        store, cluster, migrator, System::currentTimeMillis, registerTimeout, onDeclaredDead, s.requirePass(),
        tlsFiles, keepServingWhileManagerDown, nodeKey, rejoin);
  }

  /**
   * A managed node that cannot come back as the incarnation it was: drops every key it kept (the
   * removal on disk first), then takes a new incarnation (saved) and forgets the old credential.
   */
  private void startOver(String why) {
    long keys = store.size();
    PodId old = cluster.view().me();
    store.forget(); // the old incarnation's keys, hand-offs and returns are nothing to the new one
    if (!aof.syncNow()) { // on disk before the new identity is: else a crash brings them back under it
      throw new IllegalStateException("cannot write the append-only file: " + aof.writeError());
    }
    Pod mine = cluster.view().config().pod(old).orElseThrow().pod();
    Pod fresh = Nodes.pod(old.address().host(), old.address().port(), new SecureRandom().nextLong(),
        Nodes.busPort(mine), Nodes.tlsPort(mine));
    cluster.reset(fresh, true);
    try {
      Files.deleteIfExists(kept.credentialFile());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + kept.credentialFile(), e);
    }
    LOG.warn("kv node {} comes back as a new node, {}: {}; it dropped the {} keys it kept", old, fresh.id(), why,
        keys);
  }

  /** The credential kept in {@code file}, or empty if there is none. */
  private static com.google.protobuf.ByteString readCredential(Path file) {
    try {
      return Files.exists(file) ? com.google.protobuf.ByteString.copyFrom(Files.readAllBytes(file))
          : com.google.protobuf.ByteString.EMPTY;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /** Keeps {@code credential} in {@code file}, readable by the node's user only. */
  private static void writeCredential(Path file, com.google.protobuf.ByteString credential) {
    try {
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.deleteIfExists(tmp);
      try {
        Files.createFile(tmp, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
      } catch (UnsupportedOperationException e) {
        Files.createFile(tmp);
      }
      Files.write(tmp, credential.toByteArray());
      Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  /** A saved view with this node's entry brought up to date (its bus or TLS port may have changed). */
  private static ClusterView adopt(ClusterView saved, String bind, int port, int busPort, int tlsPort) {
    if (!saved.me().address().host().equals(bind) || saved.me().address().port() != port) {
      throw new IllegalStateException("the data directory belongs to the node at " + saved.me().address()
          + " (expected: " + bind + ":" + port + "; start with that address or another data directory)");
    }
    PodEntry mine = saved.config().pod(saved.me()).orElseThrow();
    if (Nodes.busPort(mine.pod()) == busPort && Nodes.tlsPort(mine.pod()) == tlsPort) {
      return saved;
    }
    Pod pod = Nodes.withPrimary(Nodes.pod(bind, port, saved.me().incarnation(), busPort, tlsPort),
        Nodes.primaryOf(mine.pod()));
    return new ClusterView(saved.config().toBuilder().pod(new PodEntry(pod, PodStatus.ACTIVE, mine.epoch())).build(),
        saved.me(), saved.migrating(), saved.importing(), java.util.Set.of());
  }

  /**
   * A free client port for a managed node (asked for port 0) whose control port, + {@link
   * #CONTROL_PORT_OFFSET}, is in range and free too: the system's ephemeral ports reach past 55535.
   */
  private static int freeManagedPort(String host) {
    for (int i = 0; i < 100; i++) {
      int p = freePort(host);
      if (p + CONTROL_PORT_OFFSET <= 65535 && bindable(host, p + CONTROL_PORT_OFFSET)) {
        return p;
      }
    }
    throw new IllegalStateException("no free port on " + host + " with port+" + CONTROL_PORT_OFFSET + " free and at"
        + " most 65535 (a managed node listens for the shard manager there)");
  }

  private static boolean bindable(String host, int port) {
    try (ServerSocket ss = new ServerSocket()) {
      ss.bind(new InetSocketAddress(host, port));
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  private static int freePort(String host) {
    try (ServerSocket ss = new ServerSocket()) {
      ss.bind(new InetSocketAddress(host, 0));
      return ss.getLocalPort();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("no free port on " + host + ": " + e.getMessage(), e);
    }
  }

  /** A managed node listens for the shard manager on its client port plus this (where Redis has its bus). */
  public static final int CONTROL_PORT_OFFSET = ManagedConfigs.CONTROL_OFFSET;


  /** The client port. */
  public int port() {
    return port;
  }

  /** The TLS client port, or 0 if the node has none. */
  public int tlsPort() {
    return tlsPort;
  }

  /** The cluster-bus port. */
  public int busPort() {
    return busPort;
  }

  /** Whether this node sees the cluster as ok (every slot owned by a node not failed). */
  public boolean clusterOk() {
    return cluster.view().ok();
  }

  /** How many of the 16384 slots this node owns now. */
  public int ownedSlots() {
    var view = cluster.view();
    return view.config().ownedCounts().getOrDefault(view.me(), 0);
  }

  /** This node's Redis node id (40 hex digits). */
  public String nodeId() {
    return cluster.view().myNodeId();
  }

  /** Whether the shard manager places this node's slots (started with {@link #startManaged}). */
  public boolean isManaged() {
    return managed != null;
  }

  /** Managed mode: keys this node has handed to other nodes with their slots (0 otherwise). */
  public long keysMoved() {
    ManagedNode m = managed;
    return m == null ? 0 : m.keysMoved();
  }

  /** Keys held here now. */
  public long keys() {
    return store.size();
  }

  /**
   * Managed mode: keys answering TRYAGAIN because their batch to a hand-off's target timed out, until
   * they are sent again (CLUSTER INFO's atoll_keys_held; 0 otherwise).
   */
  public long keysHeld() {
    return store.heldKeys();
  }

  /**
   * Managed mode: a graceful leave. Asks the manager to drain this node, waits until every slot
   * (with its keys) has moved to another node or {@code timeout} passed, and unregisters; the node
   * keeps serving meanwhile (-ASK and -MOVED follow the moves). Then {@link #close} closes it.
   *
   * @return what moved, and how many slots were still here at the end (their keys are lost)
   * @throws IllegalStateException if the node is not managed
   */
  public KvDeparture leave(Duration timeout) {
    ManagedNode m = managed;
    if (m == null) {
      throw new IllegalStateException("leave: this node is not managed (expected: started with a shard manager)");
    }
    return m.leave(timeout);
  }

  /** Stops everything. A managed node stops without draining (call {@link #leave} first). */
  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      closed.join(); // a second close (SHUTDOWN, then its owner) waits for the first
      return;
    }
    ManagedNode m = managed;
    if (m != null) {
      m.close();
    }
    if (replicator != null) {
      replicator.close();
    }
    if (server != null) {
      server.close().syncUninterruptibly();
    }
    if (tlsServer != null) {
      tlsServer.close().syncUninterruptibly();
    }
    if (bus != null) {
      bus.close();
    }
    shutdown(boss, workers, busGroup, migrations, expiry);
    if (snapshot != null) {
      try {
        snapshot.awaitBackground(TimeUnit.SECONDS.toMillis(60)); // a BGSAVE under way finishes first
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (aof != null) {
      workers.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS); // nothing appends any more
      aof.close(); // written and synced: a clean stop loses nothing under any policy
    }
    if (dataDirLock != null) {
      dataDirLock.close();
    }
    closed.complete(null);
  }

  /** Completes once the node has stopped: closed by its owner, by SHUTDOWN, or by a failed log. */
  public java.util.concurrent.CompletableFuture<Void> closed() {
    return closed;
  }

  /** A record applied by a dispatcher for a session, its reply written to a sink. */
  @FunctionalInterface
  private interface Runs {
    void run(byte[][] args, Session session, Reply sink);
  }

  /** {@code runs}, for a session of its own named {@code name}, the replies thrown away (one thread). */
  private static java.util.function.Consumer<byte[][]> discarding(String name, Runs runs) {
    Session session = new Session(0, name, name, 0, false, true);
    io.netty.buffer.ByteBuf sink = io.netty.buffer.Unpooled.buffer(256);
    Reply discard = new Reply();
    discard.target(sink);
    return args -> {
      sink.clear();
      runs.run(args, session, discard);
    };
  }

  /** Applies records of the replication stream through {@code dispatcher}, their replies thrown away. */
  private static Replicator.Applier replicated(Dispatcher dispatcher) {
    return discarding("replication", dispatcher::applyReplicated)::accept;
  }

  /** Replays logged or saved records through {@code dispatcher}, their replies thrown away. */
  private static AppendOnlyFile.Replay replayer(Dispatcher dispatcher) {
    return discarding("appendonly", dispatcher::replay)::accept;
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  private static void shutdown(EventLoopGroup boss, EventLoopGroup workers, EventLoopGroup bus, ExecutorService m,
      ScheduledExecutorService expiry) {
    m.shutdownNow();
    expiry.shutdownNow();
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    bus.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
