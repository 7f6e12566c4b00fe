package io.atoll.server.http;

import io.atoll.core.ClusterConfig;
import io.atoll.core.Pod;
import io.atoll.core.PodId;
import io.atoll.manager.ManagerObserver;
import io.atoll.manager.ShardManager;
import io.atoll.server.http.HttpEndpoint.Response;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The manager's live dashboard: a page at {@code /} (plain HTML and JS, Chart.js served from the
 * jar), fed by {@code /api/dashboard} — the cluster (pods, versions, shards per pod, every shard's
 * owner, epoch), the events the manager saw (joins, departures, rebalance rounds that moved
 * shards, with their duration) and messages per second over the last five minutes.
 *
 * <p>Traffic comes from senders that report their counters to {@code POST /api/report} about once a
 * second ({@link Reporter}): pods started with {@code --report-to} and the demo's client. The
 * manager itself sees no messages. Reports are bounded: at most {@link #MAX_REPORTERS} senders,
 * each forgotten after {@link #STALE_MILLIS} of silence.
 *
 * <p>{@link #observer()} hears the manager on its loop and only appends to bounded buffers.
 * Thread-safe.
 */
public final class Dashboard implements AutoCloseable {

  static final int MAX_EVENTS = 200;
  static final int MAX_POINTS = 300;
  static final int MAX_REPORTERS = 1024;
  static final long STALE_MILLIS = 10_000;
  private static final String CHART_JS = "META-INF/resources/webjars/chart.js/4.4.1/dist/chart.umd.js";

  /** One thing that happened, for the event list. */
  record Event(long seq, long atMillis, String kind, String text) {}

  /**
   * A sender's latest counters ({@code sent, handled, failed, asks, askNanos}) and its rates since
   * its previous report: each sender's rates come from its own two reports, so a sample that falls
   * between reports neither drops to zero nor doubles.
   */
  record Report(long atMillis, long[] counters, double sentRate, double handledRate, double failedRate,
      long asksDelta, long askNanosDelta) {}

  /** One point of the traffic chart. */
  record Point(long atMillis, double sentPerSecond, double handledPerSecond, double failedPerSecond,
      double askMillis) {}

  private final LongSupplier clock;
  private final Object lock = new Object();
  private final ArrayDeque<Event> events = new ArrayDeque<>();
  private final ArrayDeque<Point> points = new ArrayDeque<>();
  private final Map<String, Report> reports = new HashMap<>();
  private long nextSeq = 1;
  private Set<PodId> activePods;
  private long roundStart;
  private final ScheduledExecutorService sampler;

  /** A dashboard on the wall clock, sampling traffic every second. */
  public Dashboard() {
    this(System::currentTimeMillis, true);
  }

  Dashboard(LongSupplier clock, boolean sample) {
    this.clock = clock;
    if (sample) {
      sampler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "atoll-dashboard");
        t.setDaemon(true);
        return t;
      });
      sampler.scheduleAtFixedRate(this::sample, 1, 1, TimeUnit.SECONDS);
    } else {
      sampler = null;
    }
  }

  /** Hears the manager: pods joining and leaving, rounds and their duration. */
  public ManagerObserver observer() {
    return new ManagerObserver() {
      @Override
      public void configInstalled(ClusterConfig config) {
        Set<PodId> now = new HashSet<>();
        for (Pod p : config.activePods()) {
          now.add(p.id());
        }
        synchronized (lock) {
          if (activePods != null) { // the first config is the start's, not a join
            for (PodId p : now) {
              if (!activePods.contains(p)) {
                event("join", "pod " + p + " joined (version " + config.pod(p).orElseThrow().pod().version() + ")");
              }
            }
          }
          activePods = now;
        }
      }

      @Override
      public void podGone(PodId pod, boolean died) {
        synchronized (lock) {
          event(died ? "died" : "left", "pod " + pod + (died ? " died (lease ran out or proven gone)" : " left"));
        }
      }

      @Override
      public void roundStarted() {
        synchronized (lock) {
          roundStart = System.nanoTime();
        }
      }

      @Override
      public void roundFinished(int moved, boolean failed) {
        synchronized (lock) {
          long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - roundStart);
          if (moved > 0) {
            event("rebalance", "rebalance round moved " + moved + " shard" + (moved == 1 ? "" : "s") + " in " + ms
                + " ms");
          } else if (failed) {
            event("rebalance-failed", "rebalance round failed a step; retrying");
          }
        }
      }
    };
  }

  private void event(String kind, String text) {
    events.addLast(new Event(nextSeq++, clock.getAsLong(), kind, text));
    while (events.size() > MAX_EVENTS) {
      events.removeFirst();
    }
  }

  /** Adds the dashboard's routes (the page, its script, the chart library, the API) to {@code routes}. */
  public HttpEndpoint.Routes routes(HttpEndpoint.Routes routes, ShardManager manager) {
    return routes(routes, () -> manager);
  }

  /**
   * Adds the dashboard's routes over whichever manager {@code current} gives at each request (null
   * while the process stands by: the API answers 503).
   */
  public HttpEndpoint.Routes routes(HttpEndpoint.Routes routes, java.util.function.Supplier<ShardManager> current) {
    return routes(routes, current, null);
  }

  /** As {@link #routes(HttpEndpoint.Routes, java.util.function.Supplier)}; a standby's API names the leader. */
  public HttpEndpoint.Routes routes(HttpEndpoint.Routes routes, java.util.function.Supplier<ShardManager> current,
      StandbyStatus standby) {
    return routes
        .get("/", () -> resource("dashboard/index.html", "text/html; charset=utf-8"))
        .get("/dashboard.js", () -> resource("dashboard/dashboard.js", "text/javascript; charset=utf-8"))
        .get("/dashboard.css", () -> resource("dashboard/dashboard.css", "text/css; charset=utf-8"))
        .get("/vendor/chart.umd.js", () -> classpath(CHART_JS, "text/javascript; charset=utf-8"))
        .get("/api/dashboard", () -> {
          ShardManager manager = current.get();
          return manager == null ? Probes.standingBy(standby) : Response.json(json(manager));
        })
        .handle("/api/report", (method, query, body) -> method.equals("POST") ? report(body)
            : HttpEndpoint.notAllowed("POST"));
  }

  private static Response resource(String name, String type) {
    return classpath("io/atoll/server/http/" + name, type);
  }

  private static Response classpath(String name, String type) {
    try (InputStream in = Dashboard.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        return Response.text(404, "not in this build: " + name + "\n");
      }
      return new Response(200, type, in.readAllBytes());
    } catch (IOException e) {
      return Response.text(500, "cannot read " + name + ": " + e.getMessage() + "\n");
    }
  }

  /** {@code POST /api/report}: {@code reporter=ID&sent=N&handled=N&failed=N&asks=N&askNanos=N}. */
  Response report(byte[] body) {
    Map<String, String> f = new LinkedHashMap<>();
    for (String pair : new String(body, StandardCharsets.UTF_8).split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        f.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    String reporter = f.get("reporter");
    if (reporter == null || reporter.isEmpty() || reporter.length() > 200) {
      return Response.text(400, "reporter: " + (reporter == null ? "missing" : "'" + reporter.length() + " chars'")
          + " (expected: 1..200 characters)\n");
    }
    long[] v = new long[5];
    String[] names = {"sent", "handled", "failed", "asks", "askNanos"};
    for (int i = 0; i < names.length; i++) {
      String s = f.get(names[i]);
      try {
        v[i] = Long.parseLong(s);
      } catch (NumberFormatException e) {
        return Response.text(400, names[i] + ": '" + s + "' (expected: a count >= 0)\n");
      }
      if (v[i] < 0) {
        return Response.text(400, names[i] + ": " + v[i] + " (expected: a count >= 0)\n");
      }
    }
    synchronized (lock) {
      Report prev = reports.get(reporter);
      if (prev == null && reports.size() >= MAX_REPORTERS) {
        return Response.text(429, "too many reporters (expected: <= " + MAX_REPORTERS + ")\n");
      }
      long now = clock.getAsLong();
      Report next;
      if (prev == null || now <= prev.atMillis()) {
        next = new Report(now, v, 0, 0, 0, 0, 0);
      } else {
        double secs = (now - prev.atMillis()) / 1000.0;
        long[] p = prev.counters();
        next = new Report(now, v, rate(v[0] - p[0], secs), rate(v[1] - p[1], secs), rate(v[2] - p[2], secs),
            Math.max(0, v[3] - p[3]), Math.max(0, v[4] - p[4]));
      }
      reports.put(reporter, next);
    }
    return Response.text(200, "ok\n");
  }

  /** Adds a traffic point: the sum of the fresh reporters' latest rates (once a second). */
  void sample() {
    synchronized (lock) {
      long now = clock.getAsLong();
      double sent = 0;
      double handled = 0;
      double failed = 0;
      long asks = 0;
      long askNanos = 0;
      for (Iterator<Report> it = reports.values().iterator(); it.hasNext(); ) {
        Report r = it.next();
        if (now - r.atMillis() > STALE_MILLIS) {
          it.remove();
          continue;
        }
        sent += r.sentRate();
        handled += r.handledRate();
        failed += r.failedRate();
        asks += r.asksDelta();
        askNanos += r.askNanosDelta();
      }
      points.addLast(new Point(now, sent, handled, failed, asks > 0 ? askNanos / 1e6 / asks : 0));
      while (points.size() > MAX_POINTS) {
        points.removeFirst();
      }
    }
  }

  /** The newest traffic point, or null. */
  Point lastPoint() {
    synchronized (lock) {
      return points.peekLast();
    }
  }

  /** A counter's rate; a sender that restarted (its counters went down) counts as zero. */
  private static double rate(long delta, double secs) {
    return delta < 0 ? 0 : delta / secs;
  }

  String json(ShardManager manager) {
    Json j = new Json().beginObject().field("leader", String.valueOf(manager.address())).field("term", manager.term());
    ClusterJson.write(j, manager.config());
    synchronized (lock) {
      j.field("reporters", reports.size());
      j.name("events").beginArray();
      for (Event e : events) {
        j.beginObject().field("seq", e.seq()).field("at", e.atMillis()).field("kind", e.kind()).field("text", e.text())
            .endObject();
      }
      j.endArray();
      j.name("traffic").beginArray();
      for (Point p : points) {
        j.beginObject().field("at", p.atMillis()).name("sent").value(round(p.sentPerSecond()))
            .name("handled").value(round(p.handledPerSecond())).name("failed").value(round(p.failedPerSecond()))
            .name("askMillis").value(Math.round(p.askMillis() * 1000) / 1000.0).endObject();
      }
      j.endArray();
    }
    return j.endObject().toString();
  }

  private static double round(double d) {
    return Math.round(d * 10) / 10.0;
  }

  @Override
  public void close() {
    if (sampler != null) {
      sampler.shutdownNow();
    }
  }
}
