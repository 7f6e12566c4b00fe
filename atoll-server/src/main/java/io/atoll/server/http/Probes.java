package io.atoll.server.http;

import io.atoll.core.ClusterConfig;
import io.atoll.core.PodId;
import io.atoll.kv.KvServer;
import io.atoll.manager.ShardManager;
import io.atoll.runtime.Sharding;
import io.atoll.server.http.HttpEndpoint.Response;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The routes every role serves: {@code /metrics} (Prometheus text), {@code /health/live}, {@code
 * /health/ready} (200 or 503 with the reason) and {@code /cluster} (JSON), for a pod, a manager
 * and a KV node.
 */
public final class Probes {

  /** Prometheus' text exposition format. */
  static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private Probes() {}

  /** Whether a process is ready for traffic, and if not, why. */
  public record Readiness(boolean ready, String why) {
    static final Readiness READY = new Readiness(true, "ready");

    static Readiness not(String why) {
      return new Readiness(false, why);
    }
  }

  /** A Prometheus registry with the JVM's memory, thread, processor and uptime meters. */
  public static PrometheusMeterRegistry registry() {
    PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(r);
    new JvmThreadMetrics().bindTo(r);
    new ProcessorMetrics().bindTo(r);
    new UptimeMetrics().bindTo(r);
    return r;
  }

  /** {@code /metrics}, {@code /health/live} and {@code /health/ready} over {@code readiness}. */
  static HttpEndpoint.Routes common(PrometheusMeterRegistry registry, java.util.function.Supplier<Readiness> readiness) {
    return new HttpEndpoint.Routes()
        .get("/metrics", () -> new Response(200, PROMETHEUS_TEXT, registry.scrape().getBytes(StandardCharsets.UTF_8)))
        .get("/health/live", () -> Response.text(200, "live\n"))
        .get("/health/ready", () -> {
          Readiness r = readiness.get();
          return Response.text(r.ready() ? 200 : 503, r.why() + "\n");
        });
  }

  /** The routes of a pod. */
  public static HttpEndpoint.Routes pod(Sharding pod, PrometheusMeterRegistry registry) {
    return common(registry, () -> podReadiness(pod)).get("/cluster", () -> {
      Json j = new Json().beginObject().field("role", "pod").field("self", String.valueOf(pod.podId()))
          .field("holdsLease", pod.holdsLease()).field("ready", podReadiness(pod).ready())
          .field("servedShards", pod.servedShards().size());
      ClusterConfig c = pod.config();
      ClusterJson.write(j, c);
      return Response.json(j.endObject().toString());
    });
  }

  /**
   * A pod is ready while it holds its lease, is an active member of its view of the cluster, and
   * serves every shard that view gives it. Not ready while fenced, while joining, and while a shard
   * it was given is still starting.
   */
  public static Readiness podReadiness(Sharding pod) {
    if (!pod.holdsLease()) {
      return Readiness.not("not ready: fenced (no live lease)");
    }
    PodId me = pod.podId();
    ClusterConfig c = pod.config();
    if (me == null || !c.isActive(me)) {
      return Readiness.not("not ready: not an active member of the cluster config yet");
    }
    Set<Integer> served = new HashSet<>(pod.servedShards());
    List<Integer> waiting = new ArrayList<>();
    List<Integer> owned = c.positionsByOwner().getOrDefault(me, List.of());
    for (int position : owned) {
      if (!served.contains(position + 1)) {
        waiting.add(position + 1);
      }
    }
    if (!waiting.isEmpty()) {
      return Readiness.not("not ready: " + waiting.size() + " of its " + owned.size() + " shards are not active yet"
          + " (e.g. shard " + waiting.get(0) + ")");
    }
    return new Readiness(true, "ready: lease held, " + owned.size() + " shards active");
  }

  /** The routes of a shard manager (the dashboard adds its own). */
  public static HttpEndpoint.Routes manager(ShardManager manager, PrometheusMeterRegistry registry) {
    return manager(() -> manager, registry);
  }

  /**
   * The routes of whichever shard manager {@code current} gives at each request: the one a process
   * leads with now, after any deposition and new term; null while the process stands by (not
   * ready, and {@code /cluster} says so with 503).
   */
  public static HttpEndpoint.Routes manager(Supplier<ShardManager> current, PrometheusMeterRegistry registry) {
    return manager(current, null, registry);
  }

  /**
   * As {@link #manager(Supplier, PrometheusMeterRegistry)}, for a process that may stand by: while
   * it does, {@code /health/ready} (503) and {@code /cluster} (503, {@code "standby": true}) say
   * who leads, as {@code standby} knows it (null: not said).
   */
  public static HttpEndpoint.Routes manager(Supplier<ShardManager> current, StandbyStatus standby,
      PrometheusMeterRegistry registry) {
    return common(registry, () -> {
      ShardManager manager = current.get();
      return manager == null ? Readiness.not("not ready: standing by (another manager leads the store)"
          + (standby == null ? "" : "; " + standby.describe()))
          : manager.stopped().isDone() ? Readiness.not("not ready: the shard manager has stopped") : Readiness.READY;
    }).get("/cluster", () -> {
      ShardManager manager = current.get();
      return manager == null ? standingBy(standby) : Response.json(managerJson(manager));
    });
  }

  /** What a standby answers where the leading manager's state would be: 503, with the leader if known. */
  static Response standingBy(StandbyStatus standby) {
    Json j = new Json().beginObject().field("role", "manager").field("standby", true);
    if (standby != null) {
      standby.write(j);
    }
    return new Response(503, "application/json; charset=utf-8",
        j.endObject().toString().getBytes(StandardCharsets.UTF_8));
  }

  static String managerJson(ShardManager manager) {
    ClusterConfig c = manager.config();
    Json j = new Json().beginObject().field("role", "manager").field("leader", String.valueOf(manager.address()))
        .field("term", manager.term());
    ClusterJson.write(j, c);
    return j.endObject().toString();
  }

  /** The routes of a KV node: ready while it sees the cluster as ok. */
  public static HttpEndpoint.Routes kv(KvServer node, PrometheusMeterRegistry registry) {
    return common(registry, () -> node.clusterOk() ? Readiness.READY
        : Readiness.not("not ready: cluster_state is fail (a slot has no owner or its owner failed)"))
        .get("/cluster", () -> Response.json(new Json().beginObject().field("role", "kv").field("node", node.nodeId())
            .field("port", node.port()).field("clusterOk", node.clusterOk()).field("slotsOwned", node.ownedSlots())
            .endObject().toString()));
  }
}
