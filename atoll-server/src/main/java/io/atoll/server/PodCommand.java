package io.atoll.server;

import io.atoll.core.PodAddress;
import io.atoll.core.Space;
import io.atoll.runtime.Sharding;
import io.atoll.runtime.ShardingObserver;
import io.atoll.runtime.metrics.PodMetrics;
import io.atoll.server.http.HttpEndpoint;
import io.atoll.server.http.Probes;
import io.atoll.server.http.Reporter;
import io.atoll.transport.grpc.security.Role;
import io.atoll.transport.grpc.security.WireSecurity;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.atoll.server.demo.Account;
import io.atoll.server.demo.AccountDb;
import io.atoll.server.demo.Statement;
import io.atoll.server.demo.StatementDb;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code atoll pod}: a pod of the demo service (bank accounts) until stopped. */
@Command(name = "pod", mixinStandardHelpOptions = true,
    description = "Runs a pod of the demo service (bank accounts). A real service embeds the runtime instead.")
final class PodCommand implements Callable<Integer> {

  @Mixin
  Main.ConfigOption config;

  @Mixin
  TlsOptions tls;

  @Option(names = "--manager", required = true, description = "The shard managers, host:port[,host:port...]: the leader and its standbys; the pod follows the leader.")
  String manager;

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--port", defaultValue = "0", description = "Port to listen on, 0 for any (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--advertise", description = "The address announced to the manager and the other pods, host:port,"
      + " when it is not where this pod listens (a proxy, NAT, a relay); default: --host and the bound port.")
  String advertise;

  @Option(names = "--version", defaultValue = "1.0", description = "Version of this pod's code (default: ${DEFAULT-VALUE}).")
  String version;

  @Option(names = "--role", paramLabel = "NAME", split = ",", description = "Host the shard space of this role (repeatable, or NAME,NAME;"
      + " default for the default space): the manager gives this pod only shards of the spaces of its roles (atoll"
      + " manager --spaces). The demo's accounts are of the default role, so a pod whose roles leave it out hosts no"
      + " accounts; its statements are of the role statements, hosted only by pods that name it (default: the"
      + " default role only).")
  List<String> roles;

  @Option(names = "--db", description = "JDBC URL of the accounts database shared by all pods; without it"
      + " accounts live in memory and start over when they move.")
  String db;

  @Option(names = "--db-connections", defaultValue = "16", description = "Default: ${DEFAULT-VALUE}.")
  int dbConnections;

  @Option(names = "--termination-timeout", defaultValue = "3s", description = "Graceful stop wait (default: ${DEFAULT-VALUE}).")
  Duration terminationTimeout;

  @Option(names = "--send-timeout", defaultValue = "10s", description = "Default: ${DEFAULT-VALUE}.")
  Duration sendTimeout;

  @Option(names = "--max-queued", defaultValue = "2000", description = "Most messages waiting for their entities in"
      + " this pod; more are refused at once as overloaded instead of timing out (default: ${DEFAULT-VALUE}: each of"
      + " the demo's messages is a database transaction).")
  int maxQueued;

  @Option(names = "--max-queue-time", defaultValue = "1s", description = "Longest a message may be expected to wait"
      + " in this pod for its entity (the messages ahead of it times the type's recent handler time, plus the pod's"
      + " standing queue delay); one expected to wait longer, or to miss its sender's deadline, is refused at once"
      + " as overloaded with a retry hint; 0s: bounded by the deadlines only (default: ${DEFAULT-VALUE}).")
  Duration maxQueueTime;

  @Option(names = "--http-port", defaultValue = "-1", description = "Serve /metrics, /health/live, /health/ready and /cluster over HTTP on this port; 0 for any, -1 for none (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--http-host", defaultValue = "127.0.0.1", description = "Address the HTTP endpoint listens on (default: ${DEFAULT-VALUE}).")
  String httpHost;

  @Option(names = "--report-to", description = "The manager's HTTP address (host:port): report this pod's message"
      + " counts to its dashboard every second.")
  String reportTo;

  /**
   * The roles --role names, "default" read as the default role; empty without --role.
   *
   * @throws IllegalArgumentException naming a bad role and the expected form
   */
  List<String> hostedRoles() {
    List<String> out = new ArrayList<>();
    for (String r : roles == null ? List.<String>of() : roles) {
      String role = r.equals("default") ? Space.DEFAULT_ROLE : r;
      try {
        Space.checkRole(role);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--role " + e.getMessage(), e);
      }
      if (!out.contains(role)) {
        out.add(role);
      }
    }
    return out;
  }

  @Override
  public Integer call() throws Exception {
    WireSecurity security;
    List<String> hosted;
    try {
      hosted = hostedRoles();
      security = tls.security(Role.POD);
      tls.checkBind("--host", host, security.isTls());
      if (httpPort >= 0) {
        tls.checkBind("--http-host", httpHost, false);
      }
    } catch (IllegalArgumentException e) {
      System.err.println("atoll pod: " + e.getMessage());
      return 2;
    }
    AccountDb accounts = null;
    StatementDb statements = null;
    boolean hostsAccounts = hosted.isEmpty() || hosted.contains(Space.DEFAULT_ROLE);
    boolean hostsStatements = hosted.contains(Statement.ROLE);
    if (db != null) {
      try {
        accounts = hostsAccounts ? new AccountDb(db, dbConnections) : null;
        if (hostsStatements) {
          StatementDb.createSchema(db);
          statements = new StatementDb(db, dbConnections);
        }
      } catch (java.sql.SQLException e) {
        System.err.println("atoll pod: cannot open the database " + db + ": " + e.getMessage());
        if (accounts != null) {
          accounts.close();
        }
        return 1;
      }
    }
    PrometheusMeterRegistry registry = Probes.registry();
    PodMetrics metrics = new PodMetrics(registry);
    Sharding pod;
    try {
      Sharding.Builder b = Sharding.builder();
      if (advertise != null) {
        b.advertise(PodAddress.parse(advertise));
      }
      hosted.forEach(b::role);
      // The accounts live in the default space: a pod registers them only if it hosts it.
      if (hostsAccounts) {
        b.register(Account.TYPE, Account.factory(accounts));
      }
      if (hostsStatements) {
        b.register(Statement.TYPE, Statement.factory(statements));
      }
      pod = b
          .observer(httpPort >= 0 || reportTo != null ? metrics : ShardingObserver.NONE)
          .manager(manager)
          .security(security)
          .host(host)
          .port(port)
          .version(version)
          .terminationTimeout(terminationTimeout)
          .sendTimeout(sendTimeout)
          .maxQueued(maxQueued)
          .maxQueueTime(maxQueueTime)
          .askTimeout(sendTimeout)
          .start();
    } catch (RuntimeException e) {
      System.err.println("atoll pod: cannot start: " + e.getMessage());
      if (accounts != null) {
        accounts.close();
      }
      if (statements != null) {
        statements.close();
      }
      return 1;
    }
    HttpEndpoint http = null;
    if (httpPort >= 0) {
      try {
        metrics.bind(pod);
        http = HttpEndpoint.start(httpHost, httpPort, Probes.pod(pod, registry));
      } catch (RuntimeException e) {
        System.err.println("atoll pod: cannot start: " + e.getMessage());
        pod.close();
        if (accounts != null) {
          accounts.close();
        }
        if (statements != null) {
          statements.close();
        }
        return 1;
      }
    }
    System.out.println("atoll pod listening on " + pod.podId().address() + " (pod " + pod.podId() + ", version "
        + version + (hosted.isEmpty() ? "" : ", roles " + String.join(",", hosted.stream()
            .map(r -> r.isEmpty() ? "default" : r).toList())) + ")");
    if (http != null) {
      System.out.println("atoll pod http on " + http.address());
    }
    Reporter reporter = null;
    if (reportTo != null) {
      try {
        reporter = Reporter.start(reportTo, String.valueOf(pod.podId()), registry);
      } catch (IllegalArgumentException e) {
        System.err.println("atoll pod: --report-to " + reportTo + ": " + e.getMessage());
      }
    }
    System.out.flush();
    CountDownLatch stopped = new CountDownLatch(1);
    AccountDb toClose = accounts;
    StatementDb statementsToClose = statements;
    HttpEndpoint httpToClose = http;
    Reporter reporterToClose = reporter;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (reporterToClose != null) {
        reporterToClose.close();
      }
      if (httpToClose != null) {
        httpToClose.close();
      }
      pod.close();
      if (toClose != null) {
        toClose.close();
      }
      if (statementsToClose != null) {
        statementsToClose.close();
      }
      stopped.countDown();
    }, "atoll-pod-stop"));
    stopped.await();
    return 0;
  }
}
