package io.atoll.server;

import io.atoll.kv.KvMetrics;
import io.atoll.kv.KvObserver;
import io.atoll.kv.KvServer;
import io.atoll.server.http.HttpEndpoint;
import io.atoll.server.http.Probes;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.atoll.kv.KvSettings;
import io.atoll.kv.KvTls;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll kv}: one node of Atoll KV, a Redis-Cluster-compatible key-value server. */
@Command(name = "kv", mixinStandardHelpOptions = true,
    description = "Runs an Atoll KV node: Redis Cluster's protocol and commands; form a cluster with"
        + " redis-cli --cluster create. The cluster config and an append-only file of every write are kept in the"
        + " data directory; a node restarted on it comes back with its keys.")
final class KvCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Mixin
  TlsOptions tls;

  @Option(names = "--port", required = true, description = "Client port (the cluster bus listens on port+10000 unless --bus-port).")
  int port;

  @Option(names = "--bus-port", defaultValue = "-1", description = "Cluster-bus port; -1 for port+10000 (default: ${DEFAULT-VALUE})."
      + " Not with --manager: managed nodes have no bus, they listen for the manager on port+10000.")
  int busPort;

  @Option(names = "--bind", defaultValue = "127.0.0.1", description = "Address to listen on and announce (default: ${DEFAULT-VALUE}).")
  String bind;

  @Option(names = "--data-dir", description = "Where the node keeps its cluster config and its append-only file"
      + " (default: data/kv-<port>).")
  Path dataDir;

  @Option(names = "--appendonly", description = "Log every write to <data-dir>/appendonlydir and replay it at start:"
      + " yes or no (Redis' appendonly; default: yes). A node of a shard manager restarted on its data directory comes"
      + " back as the same node with its keys if the manager has not declared it dead meanwhile.")
  String appendOnly;

  @Option(names = "--appendfsync", defaultValue = "everysec", description = "When the log reaches the disk (Redis'"
      + " appendfsync): always (a reply leaves only after its write is synced; one sync per event-loop turn for"
      + " every connection), everysec (a reply leaves after its write reached the OS, synced once a second: a crash"
      + " of the machine loses at most about a second, a crash of the process nothing) or no (the OS syncs when it"
      + " likes) (default: ${DEFAULT-VALUE}).")
  String appendFsync;

  @Option(names = "--event-loops", defaultValue = "0", description = "Client I/O threads; 0 for one per core (default: ${DEFAULT-VALUE}).")
  int eventLoops;

  @Option(names = "--maxmemory", defaultValue = "0", description = "Refuse writes above this much data, e.g. 512mb or 2gb; 0 for no limit (default: ${DEFAULT-VALUE}).")
  String maxMemory;

  @Option(names = "--cluster-node-timeout", defaultValue = "5000", description = "Milliseconds of silence before a node is suspected (default: ${DEFAULT-VALUE}).")
  long nodeTimeout;

  @Option(names = "--proto-max-bulk-len", defaultValue = "64mb", description = "Longest bulk string (default: ${DEFAULT-VALUE}).")
  String maxBulk;

  @Option(names = "--min-replicas-to-ack", defaultValue = "-1", description = "As a primary, answer a write only once"
      + " this many replicas hold it, -NOREPLICAS otherwise: a failover to such a replica loses no acknowledged write."
      + " With fewer replicas online, writes are refused before they run, as Redis' min-replicas-to-write."
      + " With --manager, at most the replicas the manager gave this node. Default: with --manager, every replica"
      + " the manager gave this node (0 there is Redis' asynchronous replication, which can lose acknowledged writes"
      + " in a failover); without, 0 (as Redis).")
  int minReplicasToAck;

  @Option(names = "--replica-ack-timeout", defaultValue = "1000", description = "Milliseconds a write's reply waits"
      + " for --min-replicas-to-ack replicas before it is answered -NOREPLICAS (default: ${DEFAULT-VALUE}).")
  long replicaAckTimeout;

  @Option(names = "--repl-backlog-size", defaultValue = "10mb", description = "How much of its stream of writes a"
      + " primary keeps for replicas that fall behind or reconnect, e.g. 64mb (Redis' repl-backlog-size); a replica"
      + " further behind, or a write larger than this, takes a full copy again (default: ${DEFAULT-VALUE}).")
  String replBacklog;

  @Option(names = "--client-output-buffer-limit", defaultValue = "64mb", description = "Reply bytes pending per client before it is disconnected (default: ${DEFAULT-VALUE}).")
  String outputLimit;

  @Option(names = "--manager", description = "Managed mode: the shard managers (host:port[,host:port...], the leader"
      + " and its standbys, started with --shards 16384) place this node's slots and move them with their keys; the"
      + " node follows the leader, listens for it on port+10000 (with --tls-*: mutual TLS, a pod certificate) and"
      + " refuses operator slot commands.")
  String manager;

  @Option(names = "--drain-timeout", defaultValue = "120s",
      description = "Managed mode: on SIGTERM, how long to wait for this node's slots and keys to move to the others"
          + " before it leaves anyway (default: ${DEFAULT-VALUE}).")
  java.time.Duration drainTimeout;

  @Option(names = "--requirepass", description = "Clients must AUTH with this password first (Redis' requirepass; one"
      + " user, default). Visible in the process list: prefer --requirepass-file. Every node of a cluster needs the"
      + " same one.")
  String requirePass;

  @Option(names = "--requirepass-file", description = "As --requirepass, the password read from this file (its first"
      + " line).")
  Path requirePassFile;

  @Option(names = "--tls-port", defaultValue = "-1", description = "Also serve clients over TLS on this port (Redis'"
      + " tls-port; redis-cli --tls, Lettuce and Jedis with SSL) with --tls-cert and --tls-key, client certificates"
      + " checked against --tls-ca; 0 for any free port, -1 for none (default: ${DEFAULT-VALUE}). Managed mode: a pod"
      + " certificate; the node hands slots off to the others' TLS ports with it.")
  int tlsPort;

  @Option(names = "--tls-auth-clients", defaultValue = "yes", description = "With --tls-port: whether TLS clients must"
      + " present a certificate of --tls-ca: yes, optional or no (Redis' tls-auth-clients; default: ${DEFAULT-VALUE}).")
  String tlsAuthClients;

  @Option(names = "--tls-only", description = "With --tls-port: serve clients over TLS only; the plaintext --port is"
      + " not opened (its number still names the node; a managed node's control port stays port+10000).")
  boolean tlsOnly;

  @Option(names = "--allow-cleartext-password", description = "Accept that, with --requirepass and no --tls-port on a"
      + " non-loopback --bind, the password (every client's AUTH, the nodes' slot hand-offs) and the keys cross the"
      + " network in clear; logged at every start.")
  boolean allowCleartextPassword;

  @Option(names = "--http-port", defaultValue = "-1", description = "Serve /metrics, /health/live, /health/ready and /cluster over HTTP on this port; 0 for any, -1 for none (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--http-host", defaultValue = "127.0.0.1", description = "Address the HTTP endpoint listens on (default: ${DEFAULT-VALUE}).")
  String httpHost;

  /** What --appendonly and --appendfsync ask for. */
  private io.atoll.kv.KvPersistence persistence() {
    io.atoll.kv.KvPersistence.Fsync fsync = io.atoll.kv.KvPersistence.Fsync.parse(appendFsync);
    if (appendOnly == null) {
      return new io.atoll.kv.KvPersistence(true, fsync);
    }
    boolean on = switch (appendOnly.toLowerCase(java.util.Locale.ROOT)) {
      case "yes" -> true;
      case "no" -> false;
      default -> throw new IllegalArgumentException("--appendonly: '" + appendOnly + "' (expected: yes or no)");
    };
    return new io.atoll.kv.KvPersistence(on, fsync);
  }

  @Override
  public Integer call() throws Exception {
    KvSettings settings;
    try {
      checkManagedPorts();
      KvSettings d = KvSettings.defaults(port == 0 ? 1 : port, Path.of("."));
      settings = new KvSettings(bind, port, busPort == -1 && port == 0 ? 0 : busPort,
          dataDir != null ? dataDir : Path.of("data", "kv-" + port),
          eventLoops == 0 ? d.eventLoops() : eventLoops, bytes("--maxmemory", maxMemory),
          (int) Math.min(Integer.MAX_VALUE - 64, bytes("--proto-max-bulk-len", maxBulk)), d.maxArrayLength(),
          d.maxInlineLength(), Math.max(d.queryBufferLimit(), bytes("--proto-max-bulk-len", maxBulk)),
          bytes("--client-output-buffer-limit", outputLimit), nodeTimeout);
      settings = settings.withPassword(password()).withPersistence(persistence())
          .withReplicas(new io.atoll.kv.KvReplicas(minReplicasToAck == -1 ? (manager != null ? 16 : 0)
              : minReplicasToAck, replicaAckTimeout,
              (int) Math.min(Integer.MAX_VALUE, bytes("--repl-backlog-size", replBacklog))));
      if (tlsPort >= 0) {
        if (tls.ca == null || tls.cert == null || tls.key == null) {
          throw new IllegalArgumentException("--tls-port needs --tls-ca, --tls-cert and --tls-key (the node's"
              + " certificate and key, and the CA of client certificates; atoll certs writes them)");
        }
        settings = settings.withTls(new KvTls(tlsPort, tls.ca, tls.cert, tls.key,
            KvTls.ClientCerts.parse(tlsAuthClients), tlsOnly));
      } else if (tlsOnly) {
        throw new IllegalArgumentException("--tls-only needs --tls-port (expected: a TLS port to serve clients on)");
      }
      if (tlsOnly && manager == null) {
        throw new IllegalArgumentException("--tls-only needs --manager: without a shard manager, slots move by MIGRATE,"
            + " which reaches the target's plaintext port (expected: --manager, or no --tls-only)");
      }
      checkCleartextPassword(settings);
    } catch (IllegalArgumentException | java.io.IOException e) {
      System.err.println("atoll kv: " + e.getMessage());
      return 2;
    }
    PrometheusMeterRegistry registry = Probes.registry();
    KvMetrics metrics = new KvMetrics(registry);
    // Counted down by the shutdown hook once the node has left, or when the manager declares it dead.
    CountDownLatch stopped = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean declaredDead = new java.util.concurrent.atomic.AtomicBoolean();
    KvServer server;
    HttpEndpoint http = null;
    try {
      if (manager != null) {
        java.util.List<io.atoll.core.PodAddress> m = new java.util.ArrayList<>();
        WireSecurity security;
        try {
          for (String part : manager.split(",", -1)) {
            m.add(io.atoll.core.PodAddress.parse(part.strip()));
          }
          if (m.size() > 16) {
            throw new IllegalArgumentException(m.size() + " addresses (expected: 1..16)");
          }
        } catch (IllegalArgumentException e) {
          System.err.println("atoll kv: --manager: " + e.getMessage());
          return 2;
        }
        try {
          security = tls.security(Role.POD);
          tls.checkBind("--bind", bind, security.isTls());
        } catch (IllegalArgumentException e) {
          System.err.println("atoll kv: " + e.getMessage());
          return 2;
        }
        server = KvServer.startManaged(settings, httpPort >= 0 ? metrics : KvObserver.NONE, m, security,
            java.time.Duration.ofSeconds(30), () -> {
              // Not System.exit here: the main thread stops the node and exits 3 (see below).
              declaredDead.set(true);
              stopped.countDown();
            });
      } else {
        if ((tls.ca != null || tls.cert != null || tls.key != null) && settings.tls() == null) {
          System.err.println("atoll kv: --tls-ca, --tls-cert and --tls-key secure the link to the shard manager (with"
              + " --manager) or the TLS client port (with --tls-port); without either they do nothing");
          return 2;
        }
        try {
          // The bus and the plaintext client port have no TLS here, whatever --tls-port says.
          tls.checkBind("--bind", bind, false);
        } catch (IllegalArgumentException e) {
          System.err.println("atoll kv: " + e.getMessage());
          return 2;
        }
        server = KvServer.start(settings, httpPort >= 0 ? metrics : KvObserver.NONE);
      }
    } catch (RuntimeException e) {
      System.err.println("atoll kv: cannot start: " + e.getMessage());
      return 1;
    }
    if (httpPort >= 0) {
      try {
        metrics.bind(server);
        http = HttpEndpoint.start(httpHost, httpPort, Probes.kv(server, registry));
      } catch (RuntimeException e) {
        System.err.println("atoll kv: cannot start: " + e.getMessage());
        server.close();
        return 1;
      }
    }
    HttpEndpoint httpToClose = http;
    // Before the node says it listens: a SIGTERM sent once it has said so leaves gracefully.
    // Stopped from inside (SHUTDOWN from a client, or a log that cannot be written): the process ends.
    java.util.concurrent.atomic.AtomicBoolean stoppedItself = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicBoolean hookRan = new java.util.concurrent.atomic.AtomicBoolean();
    server.closed().thenRun(() -> {
      if (!hookRan.get()) {
        stoppedItself.set(true);
        stopped.countDown();
      }
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (stoppedItself.get() || !hookRan.compareAndSet(false, true)) {
        if (httpToClose != null) {
          httpToClose.close();
        }
        return;
      }
      if (server.isManaged() && !declaredDead.get()) {
        System.out.println("atoll kv: leaving: moving this node's slots and keys to the other nodes (up to "
            + drainTimeout.toSeconds() + " s)");
        System.out.flush();
        io.atoll.kv.KvDeparture d = server.leave(drainTimeout);
        System.out.println("atoll kv: left: " + d.slotsMoved() + " slots and " + d.keysMoved() + " keys handed over"
            + (d.slotsLeft() == 0 ? "" : "; " + d.slotsLeft() + " slots were still here, their keys are lost")
            + (d.unregistered() ? "" : "; the manager did not hear it leave (its lease runs out)"));
        System.out.flush();
      }
      if (httpToClose != null) {
        httpToClose.close();
      }
      server.close();
      stopped.countDown();
    }, "atoll-kv-stop"));
    if (server.isManaged()) {
      System.out.println("atoll kv node " + server.nodeId() + " listening on " + bind + ":" + server.port()
          + " (managed by the shard manager at " + manager + ", control port " + server.busPort() + ")");
      System.out.println(settings.persistence().appendOnly()
          ? "atoll kv: keys are kept in " + settings.dataDir().toAbsolutePath() + " (appendfsync "
              + settings.persistence().fsync().name().toLowerCase(java.util.Locale.ROOT) + "). SIGTERM moves this"
              + " node's slots and keys to the other nodes first. If it is killed (kill -9): with a replica (atoll"
              + " manager --replicas 1), the replica takes its slots with every write it acknowledged after its lease;"
              + " without one, restarted on its data directory within its lease it comes back with its keys, later"
              + " its slots are served by the others without them."
          : "atoll kv: keys are in memory only. SIGTERM moves this node's slots and keys to the other nodes first."
              + " If it is killed (kill -9): with a replica (atoll manager --replicas 1), the replica takes its slots"
              + " with every write it acknowledged after its lease; without one, its slots are served again by the"
              + " others after its lease, but its keys are lost.");
    } else {
      System.out.println("atoll kv node " + server.nodeId() + " listening on " + bind + ":" + server.port()
          + " (cluster bus " + server.busPort() + ", data dir " + settings.dataDir().toAbsolutePath() + ")");
    }
    if (server.tlsPort() > 0) {
      System.out.println("atoll kv: TLS clients on " + bind + ":" + server.tlsPort() + " (client certificates: "
          + tlsAuthClients + ")");
    }
    if (http != null) {
      System.out.println("atoll kv http on " + http.address());
    }
    System.out.flush();
    stopped.await();
    if (stoppedItself.get() && !declaredDead.get()) {
      System.out.println("atoll kv: stopped (SHUTDOWN, or an append only file it could not write: see the log)");
      return 0;
    }
    if (declaredDead.get()) {
      System.err.println("atoll kv: the shard manager declared this node dead (its lease lapsed) and gave its"
          + " slots to other nodes; stopping. Restart it to join again as a new node.");
      return 3; // the exit runs the hook, which closes the node without a leave
    }
    return 0;
  }

  /**
   * Managed mode has no cluster bus: the node listens for the shard manager on port+10000 (the
   * manager knows it by that address), so --bus-port would mean nothing and a port whose +10000 is
   * past 65535 cannot work; both are refused rather than ignored.
   */
  private void checkManagedPorts() {
    if (manager == null) {
      return;
    }
    int control = port + KvServer.CONTROL_PORT_OFFSET;
    if (busPort != -1) {
      throw new IllegalArgumentException("--bus-port " + busPort + " with --manager: a managed node has no cluster"
          + " bus (the shard manager's configs replace gossip); it listens for the manager on --port + "
          + KvServer.CONTROL_PORT_OFFSET + (port == 0 ? "" : " = " + control) + " (expected: no --bus-port with --manager)");
    }
    if (control > 65535) {
      throw new IllegalArgumentException("--port " + port + " with --manager: the node listens for the shard manager"
          + " on --port + " + KvServer.CONTROL_PORT_OFFSET + " = " + control + " (expected: --port 0.."
          + (65535 - KvServer.CONTROL_PORT_OFFSET) + " with --manager)");
    }
  }

  /**
   * A password without a TLS port on a non-loopback address would cross the network in clear (every
   * client's AUTH and the nodes' hand-offs): refused unless --allow-cleartext-password, then logged.
   */
  private void checkCleartextPassword(KvSettings settings) {
    // managed hand-offs go over the targets' TLS ports; MIGRATE (no --manager) still reaches the plaintext port
    boolean secured = settings.tls() != null && manager != null;
    if (settings.requirePass() == null || secured || TlsOptions.isLoopback(bind)) {
      return;
    }
    String why = settings.tls() == null ? "without --tls-port" : "without --manager";
    if (!allowCleartextPassword) {
      throw new IllegalArgumentException(settings.tls() == null
          ? "--bind " + bind + " is not a loopback address, and a password is set without --tls-port: the"
              + " password (every client's AUTH, and the nodes' slot hand-offs) and the keys would cross the network"
              + " in clear (expected: --tls-port with --tls-ca, --tls-cert and --tls-key from atoll certs, or"
              + " --allow-cleartext-password to accept that)"
          : "--bind " + bind + " is not a loopback address, and a password is set without --manager: slots then"
              + " move by MIGRATE, which sends the password and the keys to the target's plaintext port in clear"
              + " (expected: --manager, so that hand-offs go over the TLS ports, or --allow-cleartext-password to"
              + " accept that)");
    }
    org.slf4j.LoggerFactory.getLogger("io.atoll.security").warn("INSECURE: the password and keys of this node on {}"
        + " cross the network in clear ({}), as --allow-cleartext-password allows", bind, why);
  }

  /** The password of --requirepass or --requirepass-file, or null. */
  private String password() throws java.io.IOException {
    if (requirePass != null && requirePassFile != null) {
      throw new IllegalArgumentException("--requirepass and --requirepass-file: both given (expected: one)");
    }
    if (requirePassFile != null) {
      String first = java.nio.file.Files.readAllLines(requirePassFile).stream().findFirst().orElse("").strip();
      if (first.isEmpty()) {
        throw new IllegalArgumentException("--requirepass-file " + requirePassFile + ": empty (expected: the password"
            + " on its first line)");
      }
      return first;
    }
    return requirePass;
  }

  /** Redis' memory units: 100, 1kb, 1k, 1mb, 1m, 1gb, 1g (k = 1000, kb = 1024). */
  static long bytes(String option, String text) {
    String t = text.trim().toLowerCase(java.util.Locale.ROOT);
    long unit = 1;
    String[][] units = {{"kb", "1024"}, {"mb", "1048576"}, {"gb", "1073741824"}, {"k", "1000"}, {"m", "1000000"},
        {"g", "1000000000"}, {"b", "1"}};
    for (String[] u : units) {
      if (t.endsWith(u[0])) {
        unit = Long.parseLong(u[1]);
        t = t.substring(0, t.length() - u[0].length());
        break;
      }
    }
    try {
      long v = Long.parseLong(t);
      if (v < 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(v, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(option + ": '" + text + "' (expected: a size such as 0, 100mb or 2gb)");
    }
  }
}
